import { describe, expect, it } from 'vitest';
import { describeChatInProcess, UPSTREAM } from './helpers/chat-gateway.js';
import {
  cachedTokensBody,
  chargesOf,
  entriesFor,
  fixtureJson,
  getGeneration,
  jsonReply,
  postChat,
  promptEstimate,
  sseReply,
  usd6,
} from './helpers/chat-wire.js';
import { type ApiResponse, call, expectError } from './helpers/http.js';

/** The recorded cached-tokens body with its message replaced. */
function withMessage(message: Record<string, unknown>): Record<string, unknown> {
  const body = structuredClone(cachedTokensBody()) as { choices: { message: unknown }[] };
  body.choices[0]!.message = message;
  return body;
}

// The cached-tokens usage (prompt 10122, 9984 cached, completion 1) on acme/gpt costs
// 138 × 0.11 = 15.18 + 9984 × 0.055 = 549.12 + 1 × 0.44 = 0.44 → 564.74 → 565 micros.
const CACHED_BODY_COST = 565;

// '[{"role":"user","content":"hi"}]' = 32 characters → ⌈32 / 4⌉ = 8 prompt tokens.
const HI = [{ role: 'user', content: 'hi' }];
// The pre-flight worst case of HI with max_tokens 100 on acme/gpt-4o (2.50 / 10 per million):
// 8 × 2.5 = 20 + 100 × 10 = 1000 → 1020 micros.
const HI_WORST_CASE = 1020;

describeChatInProcess('chat completions, billing', (gw) => {
  describe('waivers and zero costs', () => {
    it('an empty answer with no tool calls is waived (zero_completion): cost 0, saved_usd > 0, no ledger entry', async () => {
      const { mock, url, storage } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(
        UPSTREAM.openai,
        jsonReply(withMessage({ role: 'assistant', content: '', refusal: null })),
      );

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt', messages: HI },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.body.gateway).toMatchObject({
        cost_micros: 0,
        cost_usd: 0,
        waived: 'zero_completion',
        saved_usd: CACHED_BODY_COST / 1_000_000,
      });
      expect(response.body.gateway.saved_usd).toBeGreaterThan(0);
      expect(response.headers.get('x-gateway-cost-usd')).toBe('0.000000');

      const requestId = response.body.gateway.request_id as string;
      expect(await entriesFor(storage, tenant.account.id, requestId)).toEqual([]);
      expect((await storage.getAccount(tenant.account.id))!.balanceMicros).toBe(10_000_000);
      const generation = await getGeneration(url, tenant.inferenceKey, requestId);
      expect(generation.body.data).toMatchObject({
        status: 'success',
        cost_micros: 0,
        waived: 'zero_completion',
        saved_micros: CACHED_BODY_COST,
      });
    });

    it('a turn that only calls tools (content null) is billed normally', async () => {
      const { mock, url, storage } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(
        UPSTREAM.openai,
        jsonReply(
          withMessage({
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
          }),
        ),
      );

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: {
          model: 'acme/gpt',
          messages: HI,
          tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }],
        },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.body.gateway.cost_micros).toBe(CACHED_BODY_COST);
      expect(response.body.gateway.waived).toBeUndefined();
      const ledger = await entriesFor(storage, tenant.account.id, response.body.gateway.request_id);
      expect(ledger.map((e) => e.amountMicros)).toEqual([-CACHED_BODY_COST]);
    });

    it('a zero-price model costs 0 without a waiver and writes no ledger entry', async () => {
      const { mock, url, storage } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/free', messages: HI },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.body.gateway).toMatchObject({ cost_micros: 0, model: 'acme/free' });
      expect(response.body.gateway.waived).toBeUndefined();
      expect(response.headers.get('x-gateway-cost-usd')).toBe('0.000000');
      expect(mock.received[0]!.body.model).toBe('free-1');
      expect(await chargesOf(storage, tenant.account.id)).toEqual([]);
    });
  });

  describe('the pre-flight refuses with 402 before anything goes upstream', () => {
    /** The refusal, nothing sent upstream, no charge, no hold left, and a record with the code. */
    async function expectRefusedBeforeUpstream(
      response: ApiResponse,
      tenant: { account: { id: string } },
      key: string,
    ) {
      const { mock, storage, url } = gw();
      expect(mock.received).toEqual([]);
      expect(await chargesOf(storage, tenant.account.id)).toEqual([]);
      expect((await storage.listLedgerEntries(tenant.account.id)).every((e) => e.kind === 'credit')).toBe(
        true,
      );
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
      const generation = await getGeneration(url, key, response.body.error.request_id);
      expect(generation.status).toBe(200);
      expect(generation.body.data).toMatchObject({ cost_micros: 0, http_status: 402 });
      expect(generation.body.data.error.code).toBe(response.body.error.code);
    }

    it('insufficient_credit: the message quotes the balance and the estimate to six decimals', async () => {
      const { url } = gw();
      // One micro short of the worst case.
      const tenant = await gw().newTenant({ creditMicros: HI_WORST_CASE - 1 });
      expect(promptEstimate(HI)).toBe(8);

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt-4o', messages: HI, max_tokens: 100 },
      });
      expectError(response, 402, 'insufficient_credit');
      expect(response.body.error.message).toContain(usd6(HI_WORST_CASE - 1)); // 0.001019
      expect(response.body.error.message).toContain(usd6(HI_WORST_CASE)); // 0.001020
      await expectRefusedBeforeUpstream(response, tenant, tenant.inferenceKey);
    });

    it('a balance of exactly the worst case is enough', async () => {
      const { url, mock, storage } = gw();
      const tenant = await gw().newTenant({ creditMicros: HI_WORST_CASE });
      // prompt 8, completion 100: exactly the worst case, 1020 micros.
      const reply = withMessage({ role: 'assistant', content: 'hello' }) as { usage: unknown };
      reply.usage = { prompt_tokens: 8, completion_tokens: 100, total_tokens: 108 };
      mock.enqueue(UPSTREAM.openai, jsonReply(reply));

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt-4o', messages: HI, max_tokens: 100 },
      });
      expect(response.status, response.text).toBe(200);
      expect(response.body.gateway.cost_micros).toBe(HI_WORST_CASE);
      expect((await storage.getAccount(tenant.account.id))!.balanceMicros).toBe(0);
    });

    it("key_limit_exceeded: the key's lifetime spend_limit_usd cannot cover the worst case", async () => {
      const { url } = gw();
      const tenant = await gw().newTenant();
      const minted = await call(url, '/v1/keys', {
        key: tenant.provisioningKey,
        json: { name: 'capped customer', spend_limit_usd: 0.001 },
      });
      expect(minted.status, minted.text).toBe(201);
      const cappedKey = minted.body.data.key as string;

      const response = await call(url, '/v1/chat/completions', {
        key: cappedKey,
        json: { model: 'acme/gpt-4o', messages: HI, max_tokens: 100 },
      });
      expectError(response, 402, 'key_limit_exceeded');
      await expectRefusedBeforeUpstream(response, tenant, cappedKey);
    });

    it("monthly_limit_exceeded: the account's monthly ceiling cannot cover the worst case", async () => {
      const { url } = gw();
      const tenant = await gw().newTenant({ monthlyLimitMicros: 1_000 });

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt-4o', messages: HI, max_tokens: 100 },
      });
      expectError(response, 402, 'monthly_limit_exceeded');
      await expectRefusedBeforeUpstream(response, tenant, tenant.inferenceKey);
    });
  });

  describe('the ledger', () => {
    it('after many requests the balance is the credits minus the charges, with exactly one ledger entry per charged request', async () => {
      const { mock, url, storage } = gw();
      const credit = 1_000_000;
      const tenant = await gw().newTenant({ creditMicros: credit });
      const charged = new Map<string, number>();
      const uncharged: string[] = [];
      const note = (requestId: string, cost: number) => {
        if (cost > 0) charged.set(requestId, cost);
        else uncharged.push(requestId);
      };

      // Non-streaming: OpenAI (565), Anthropic tool-only (4758), a waived empty answer (0).
      mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));
      mock.enqueue(UPSTREAM.anthropic, jsonReply(fixtureJson('anthropic-message-tool-use.json')));
      mock.enqueue(UPSTREAM.openai, jsonReply(withMessage({ role: 'assistant', content: '' })));
      for (const model of ['acme/gpt', 'acme/claude', 'acme/gpt']) {
        const response = await call(url, '/v1/chat/completions', {
          key: tenant.inferenceKey,
          json: { model, messages: HI },
        });
        expect(response.status, response.text).toBe(200);
        note(response.body.gateway.request_id, response.body.gateway.cost_micros);
      }
      // An upstream refusal (not charged).
      mock.enqueue(
        UPSTREAM.openai,
        jsonReply(fixtureJson('openai-error-400-unsupported-parameter.json'), 400),
      );
      const refused = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt', messages: HI },
      });
      expect(refused.status).toBe(400);
      uncharged.push(refused.body.error.request_id);
      // Streams: OpenAI text (134), Anthropic cache write (69921; its recorded prompt was 18,642
      // tokens, so the request is as long, for the hold to cover it).
      for (const [model, path, fixture, messages] of [
        ['acme/gpt', UPSTREAM.openai, 'openai-chat-stream-text-include-usage.chunks.txt', HI],
        [
          'acme/claude',
          UPSTREAM.anthropic,
          'anthropic-stream-cache-write.chunks.txt',
          [{ role: 'user', content: 'Go. '.repeat(18_750) }],
        ],
      ] as const) {
        mock.enqueue(path, sseReply(fixture));
        const response = await postChat(url, tenant.inferenceKey, { model, messages, stream: true });
        const text = await response.text();
        const terminal = JSON.parse(
          text
            .split('\n\n')
            .filter(Boolean)
            .at(-2)!
            .replace(/^data: /, ''),
        );
        note(terminal.gateway.request_id, terminal.gateway.cost_micros);
      }

      expect([...charged.values()]).toEqual([565, 4758, 134, 69_921]);
      const total = [...charged.values()].reduce((a, b) => a + b, 0);
      expect((await storage.getAccount(tenant.account.id))!.balanceMicros).toBe(credit - total);

      const charges = await chargesOf(storage, tenant.account.id);
      expect(charges).toHaveLength(charged.size);
      for (const [requestId, cost] of charged) {
        const entries = charges.filter((e) => e.requestId === requestId);
        expect(entries, requestId).toHaveLength(1);
        expect(entries[0]!.amountMicros).toBe(-cost);
      }
      for (const requestId of uncharged) {
        expect(await entriesFor(storage, tenant.account.id, requestId), requestId).toEqual([]);
      }
      // The ledger sums to the cached balance.
      const ledger = await storage.listLedgerEntries(tenant.account.id);
      expect(ledger.reduce((sum, e) => sum + e.amountMicros, 0)).toBe(credit - total);
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
    });
  });

  describe('concurrency', () => {
    // Runs on SQLite and on Postgres (TEST_DATABASE_URL); the PGlite adapter's reserve/settle
    // atomicity is covered by the storage conformance suite.
    it('50 concurrent requests against a balance of exactly 10 worst cases: 10 succeed, the rest are 402, Σ charges ≤ balance, no hold left', async () => {
      const { mock, url, storage } = gw();
      const messages = [{ role: 'user', content: 'concurrency' }];
      // '[{"role":"user","content":"concurrency"}]' = 41 characters → ⌈41 / 4⌉ = 11 prompt tokens.
      // Worst case on acme/gpt with max_tokens 1000: 11 × 0.11 = 1.21 + 1000 × 0.44 = 440 → 441.21 → 442.
      expect(promptEstimate(messages)).toBe(11);
      const worstCase = 442;
      const credit = 10 * worstCase;
      const tenant = await gw().newTenant({ creditMicros: credit });
      // Each answer uses the whole worst case (prompt 11, completion 1000 → 442 micros), so a
      // settled request frees nothing: exactly 10 can ever be admitted, whatever the interleaving.
      const reply = withMessage({ role: 'assistant', content: 'done' }) as { usage: unknown };
      reply.usage = { prompt_tokens: 11, completion_tokens: 1000, total_tokens: 1011 };
      mock.setDefault(UPSTREAM.openai, jsonReply(reply));

      const responses = await Promise.all(
        Array.from({ length: 50 }, () =>
          call(url, '/v1/chat/completions', {
            key: tenant.inferenceKey,
            json: { model: 'acme/gpt', messages, max_tokens: 1000 },
          }),
        ),
      );

      const ok = responses.filter((r) => r.status === 200);
      const refused = responses.filter((r) => r.status !== 200);
      for (const r of refused) expectError(r, 402, 'insufficient_credit');
      expect(ok.length).toBeLessThanOrEqual(10);
      expect(ok.length).toBe(10);
      expect(mock.received).toHaveLength(ok.length);
      for (const r of ok) expect(r.body.gateway.cost_micros).toBe(worstCase);

      const charges = await chargesOf(storage, tenant.account.id);
      const charged = -charges.reduce((sum, e) => sum + e.amountMicros, 0);
      expect(charged).toBeLessThanOrEqual(credit);
      expect(charged).toBe(ok.length * worstCase);
      expect(new Set(charges.map((e) => e.requestId))).toEqual(
        new Set(ok.map((r) => r.body.gateway.request_id)),
      );
      const account = await storage.getAccount(tenant.account.id);
      expect(account!.balanceMicros).toBe(credit - charged);
      expect(account!.balanceMicros).toBeGreaterThanOrEqual(0);
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
    });
  });
});
