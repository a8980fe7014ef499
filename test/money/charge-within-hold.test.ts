import type { GatewayLogger } from '@tollgate/core';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountingGateway, startCountingGateway } from '../helpers/counting-storage.js';
import { createTenant, type Tenant } from '../helpers/tenant.js';
import { testConfig } from '../helpers/test-config.js';
import {
  type Billing,
  chatAnswer,
  embeddingsAnswer,
  type Reporting,
  rerankAnswer,
  searchAnswer,
} from './honest-upstream.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

/*
 * "A charge never exceeds its hold" (product.md, "Money and safety, made precise"), in-process through
 * `gateway.fetch`: every request shape an attack run charged past its hold, sent to an honest
 * upstream that generates all it is allowed and bills what it received, is held for all it can cost
 * (no overrun); usage beyond the hold (an absurd count) is charged at the hold, with the overrun
 * logged; and a property run over random shapes and random reported usage on every operation keeps
 * charge ≤ hold, one ledger entry per charge and balance == credits − Σ charges.
 */

const config = testConfig({
  providers: {
    main: { format: 'openai', base_url: 'http://upstream.test/main/v1', api_key: 'sk-main' },
    newer: {
      format: 'openai',
      base_url: 'http://upstream.test/newer/v1',
      api_key: 'sk-newer',
      max_tokens_field: 'max_completion_tokens',
    },
    coh: { format: 'cohere', base_url: 'http://upstream.test/coh/v2', api_key: 'co-key' },
    exa: { format: 'web-search', base_url: 'http://upstream.test/exa', api_key: 'exa-key' },
  },
  models: [
    {
      id: 'acme/chat',
      max_output_tokens: 1_000,
      capabilities: { tools: true },
      endpoints: [{ provider: 'main', upstream_model: 'c-1', pricing: { prompt: '1', completion: '2' } }],
    },
    {
      // Opus-like prices: an absurd count priced here is past the largest safe amount.
      id: 'acme/dear',
      max_output_tokens: 1_000,
      endpoints: [{ provider: 'main', upstream_model: 'd-1', pricing: { prompt: '15', completion: '75' } }],
    },
    {
      id: 'acme/newer',
      max_output_tokens: 1_000,
      context_length: 2_000,
      endpoints: [{ provider: 'newer', upstream_model: 'n-1', pricing: { prompt: '1', completion: '2' } }],
    },
    {
      id: 'acme/embed',
      type: 'embedding',
      endpoints: [{ provider: 'main', upstream_model: 'e-1', pricing: { prompt: '1' } }],
    },
    {
      id: 'acme/rerank',
      type: 'rerank',
      endpoints: [{ provider: 'coh', upstream_model: 'r-1', pricing: { search: '0.002' } }],
    },
  ],
});

/** What the upstream was sent and billed, by call. */
interface UpstreamCall {
  path: string;
  body: Json;
  billing: Billing | null;
}

describe('a charge never exceeds its hold (in-process gateway)', () => {
  let gw: CountingGateway;
  const calls: UpstreamCall[] = [];
  const overruns: { requestId: string; holdMicros: number; overrunMicros: number }[] = [];
  let reporting: Reporting = 'honest';

  const logger: GatewayLogger = {
    info() {},
    error() {},
    warn(fields) {
      const f = fields as { requestId?: string; holdMicros?: number; overrunMicros?: number };
      if (f.overrunMicros !== undefined) {
        overruns.push({ requestId: f.requestId!, holdMicros: f.holdMicros!, overrunMicros: f.overrunMicros });
      }
    },
  };

  const upstream: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const body = JSON.parse(String(init?.body ?? '{}'));
    const reply = (answer: Json, billing: Billing | null) => {
      calls.push({ path: url.pathname, body, billing });
      return Response.json(answer);
    };
    if (url.pathname.endsWith('/chat/completions')) {
      const { answer, billing } = chatAnswer(body, reporting);
      return reply(answer, billing);
    }
    if (url.pathname.endsWith('/embeddings')) {
      const { answer, billing } = embeddingsAnswer(body, reporting);
      return reply(answer, billing);
    }
    if (url.pathname.endsWith('/rerank')) {
      const { answer, billing } = rerankAnswer(body, reporting);
      return reply(answer, billing);
    }
    if (url.pathname.endsWith('/search')) return reply(searchAnswer(body), null);
    return new Response('no such path', { status: 404 });
  };

  beforeAll(async () => {
    gw = await startCountingGateway(config, upstream, { logger });
  });
  afterAll(() => gw?.close());

  const post = (tenant: Tenant, path: string, body: Json) =>
    gw.gateway.fetch(
      new Request(`http://gateway.test${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tenant.inferenceKey}` },
        body: JSON.stringify(body),
      }),
    );

  /** Sends one request; its hold, charge (record and ledger) and the overrun logged for it. */
  async function send(tenant: Tenant, path: string, body: Json) {
    const response = await post(tenant, path, body);
    const requestId = response.headers.get('x-gateway-request-id')!;
    const answer = (await response.json()) as Json;
    const hold = gw.counts.holds.get(requestId)?.amountMicros;
    const [record] = gw.raw('SELECT cost_micros FROM request_records WHERE id = ?', requestId);
    const charges = gw.raw(
      "SELECT amount_micros FROM ledger_entries WHERE request_id = ? AND kind = 'charge'",
      requestId,
    );
    return {
      status: response.status,
      answer,
      hold,
      cost: Number(record?.cost_micros),
      charges: charges.map((c) => -Number(c.amount_micros)),
      overrun: overruns.find((o) => o.requestId === requestId) ?? null,
    };
  }

  const ask = (extra: Json = {}) => ({
    model: 'acme/chat',
    messages: [{ role: 'user', content: 'Tell me everything.' }],
    ...extra,
  });

  /** An honest upstream's bill for a request: its charge, priced at acme/chat's 1 and 2 per token. */
  const honestCost = (billing: Billing) => billing.promptTokens + 2 * billing.completionTokens;

  describe('each shape an attack run charged past its hold is held for all it can cost', () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await createTenant(gw.storage, { creditMicros: 1_000_000_000 });
      reporting = 'honest';
    });

    it.each([
      [
        'max_tokens 1 with max_completion_tokens 4096 (the upstream honours the larger)',
        { max_tokens: 1, max_completion_tokens: 4_096 },
      ],
      ['no output ceiling (the gateway sends the one it held)', {}],
      ['n = 3 with max_completion_tokens', { n: 3, max_completion_tokens: 50 }],
    ])('%s', async (_name, extra) => {
      calls.length = 0;
      const sent = await send(tenant, '/v1/chat/completions', ask(extra));
      expect(sent.status).toBe(200);
      const billing = calls[0]!.billing!;
      expect(sent.overrun).toBeNull();
      expect(sent.cost).toBe(honestCost(billing));
      expect(sent.cost).toBeLessThanOrEqual(sent.hold!);
      expect(sent.charges).toEqual([sent.cost]);
    });

    it('a request that names no ceiling sends the held one upstream, in the provider field, lowered to the context', async () => {
      calls.length = 0;
      await send(tenant, '/v1/chat/completions', ask());
      expect(calls[0]!.body.max_tokens).toBe(1_000);
      calls.length = 0;
      const prompt = 'word '.repeat(2_000); // ≈ 2,500 tokens with its framing: over the 2,000 context
      const small = await send(tenant, '/v1/chat/completions', {
        model: 'acme/newer',
        messages: [{ role: 'user', content: prompt.slice(0, 4_000) }],
      });
      expect(small.status).toBe(200);
      const sentBody = calls[0]!.body;
      expect(sentBody).not.toHaveProperty('max_tokens');
      expect(sentBody.max_completion_tokens).toBeGreaterThanOrEqual(1);
      expect(sentBody.max_completion_tokens).toBeLessThan(1_000);
      expect(small.overrun).toBeNull();
    });

    it('image parts are held at the image price, not at the length of their URL', async () => {
      calls.length = 0;
      const image = (url: string) => ({ type: 'image_url', image_url: { url } });
      const sent = await send(
        tenant,
        '/v1/chat/completions',
        ask({
          max_tokens: 10,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What are these?' },
                image('https://x.test/a.png'),
                image('https://x.test/b.png'),
              ],
            },
          ],
        }),
      );
      expect(sent.status).toBe(200);
      expect(sent.overrun).toBeNull();
      expect(sent.cost).toBe(honestCost(calls[0]!.billing!));
    });

    it('the web plugin holds the most its results can add and charges the flat price per search, not what the backend reports', async () => {
      for (const body of [
        ask({ max_tokens: 10, plugins: [{ id: 'web', max_results: 10 }] }),
        { ...ask({ max_tokens: 10 }), model: 'acme/chat:online' },
      ]) {
        calls.length = 0;
        const sent = await send(tenant, '/v1/chat/completions', body);
        expect(sent.status).toBe(200);
        const chat = calls.find((c) => c.path.endsWith('/chat/completions'))!;
        expect(sent.overrun).toBeNull();
        // The backend reported $3 for the search: the caller pays price_per_search ($0.007).
        expect(sent.cost).toBe(honestCost(chat.billing!) + 7_000);
        expect(sent.answer.gateway.cost_breakdown.web_search_micros).toBe(7_000);
        expect(sent.cost).toBeLessThanOrEqual(sent.hold!);
      }
    });

    it('rerank holds the search units long documents are billed', async () => {
      calls.length = 0;
      const documents = Array.from({ length: 150 }, (_, i) => `doc ${i} ${'lorem ipsum '.repeat(400)}`);
      const sent = await send(tenant, '/v1/rerank', { model: 'acme/rerank', query: 'q', documents });
      expect(sent.status).toBe(200);
      const billing = calls[0]!.billing!;
      // ⌈150 documents / 100⌉ would be 2 units; 150 documents of ~4,800 characters are 450 chunks.
      expect(billing.searchUnits).toBe(5);
      expect(sent.overrun).toBeNull();
      expect(sent.cost).toBe(billing.searchUnits * 2_000);
    });
  });

  describe('usage reported beyond the hold', () => {
    it('is charged at the hold: one ledger entry of the hold, the overrun logged, the balance intact', async () => {
      const tenant = await createTenant(gw.storage, { creditMicros: 5_000_000 });
      reporting = 'absurd';
      try {
        const sent = await send(tenant, '/v1/chat/completions', ask({ max_tokens: 10 }));
        expect(sent.status).toBe(200);
        expect(sent.cost).toBe(sent.hold);
        expect(sent.answer.gateway.cost_micros).toBe(sent.hold);
        expect(sent.charges).toEqual([sent.hold]);
        expect(sent.overrun).toMatchObject({ holdMicros: sent.hold });
        expect(sent.overrun!.overrunMicros).toBeGreaterThan(1e15);
        const account = await gw.storage.getAccount(tenant.account.id);
        expect(account!.balanceMicros).toBe(5_000_000 - sent.hold!);
      } finally {
        reporting = 'honest';
      }
    });
  });

  describe('property: random shapes and random reported usage, on every operation', () => {
    type Shape =
      | {
          op: 'chat';
          dear: boolean;
          maxTokens: number | null;
          maxCompletion: number | null;
          n: number;
          images: number;
          cjk: boolean;
          web: boolean;
        }
      | { op: 'embeddings'; inputs: number; length: number }
      | { op: 'rerank'; documents: number; length: number };

    const shapeArb: fc.Arbitrary<Shape> = fc.oneof(
      fc.record({
        op: fc.constant('chat' as const),
        dear: fc.boolean(),
        maxTokens: fc.option(fc.integer({ min: 1, max: 3_000 })),
        maxCompletion: fc.option(fc.integer({ min: 1, max: 3_000 })),
        n: fc.integer({ min: 1, max: 3 }),
        images: fc.integer({ min: 0, max: 3 }),
        cjk: fc.boolean(),
        web: fc.boolean(),
      }),
      fc.record({
        op: fc.constant('embeddings' as const),
        inputs: fc.integer({ min: 1, max: 5 }),
        length: fc.integer({ min: 1, max: 3_000 }),
      }),
      fc.record({
        op: fc.constant('rerank' as const),
        documents: fc.integer({ min: 1, max: 250 }),
        length: fc.integer({ min: 1, max: 6_000 }),
      }),
    );
    const reportingArb = fc.constantFrom<Reporting>('honest', 'absurd', 'missing');

    function request(shape: Shape): { path: string; body: Json } {
      if (shape.op === 'embeddings') {
        return {
          path: '/v1/embeddings',
          body: {
            model: 'acme/embed',
            input: Array.from({ length: shape.inputs }, () => 'e'.repeat(shape.length)),
          },
        };
      }
      if (shape.op === 'rerank') {
        const documents = Array.from(
          { length: shape.documents },
          (_, i) => `${i} ${'d'.repeat(shape.length)}`,
        );
        return { path: '/v1/rerank', body: { model: 'acme/rerank', query: 'which?', documents } };
      }
      const text = shape.cjk ? '漢字'.repeat(50) : 'words '.repeat(50);
      const content: Json[] = [{ type: 'text', text }];
      for (let i = 0; i < shape.images; i++)
        content.push({ type: 'image_url', image_url: { url: `https://x.test/${i}.png` } });
      return {
        path: '/v1/chat/completions',
        body: {
          model: shape.dear ? 'acme/dear' : 'acme/chat',
          messages: [{ role: 'user', content }],
          n: shape.n,
          ...(shape.maxTokens !== null && { max_tokens: shape.maxTokens }),
          ...(shape.maxCompletion !== null && { max_completion_tokens: shape.maxCompletion }),
          ...(shape.web && { plugins: [{ id: 'web', max_results: 2 }] }),
        },
      };
    }

    it('no 5xx, charge ≤ hold, one ledger entry per charge, balance == credits − Σ charges', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(shapeArb, reportingArb), { minLength: 1, maxLength: 4 }),
          async (steps) => {
            const credit = 50_000_000;
            const tenant = await createTenant(gw.storage, { creditMicros: credit });
            for (const [shape, how] of steps) {
              reporting = how;
              const { path, body } = request(shape);
              const sent = await send(tenant, path, body);
              // The upstream always answers: whatever it reports, the caller is never answered 5xx.
              expect(sent.status).toBeLessThan(500);
              if (sent.hold === undefined) {
                // Refused before any hold: nothing charged.
                expect(sent.charges).toEqual([]);
                continue;
              }
              expect(sent.cost).toBeLessThanOrEqual(sent.hold);
              expect(sent.charges).toEqual(sent.cost > 0 ? [sent.cost] : []);
              if (how === 'honest') expect(sent.overrun).toBeNull();
            }
            reporting = 'honest';
            const [row] = gw.raw(
              "SELECT COALESCE(SUM(-amount_micros), 0) AS charged FROM ledger_entries WHERE account_id = ? AND kind = 'charge'",
              tenant.account.id,
            );
            const account = await gw.storage.getAccount(tenant.account.id);
            expect(account!.balanceMicros).toBe(credit - Number(row!.charged));
          },
        ),
        { numRuns: 25 },
      );
    });
  });
});
