import { APIError } from 'openai';
import { beforeAll, beforeEach, expect, it } from 'vitest';
import { SettleFailures } from './helpers/records-failing-storage.js';
import {
  CapturingLogger,
  describeRecords,
  expectedCostMicros,
  getJson,
  PATHS,
} from './helpers/records-gateway.js';
import { recordedOpenAiCompletion } from './helpers/records-wire.js';
import type { Tenant } from './helpers/test-gateway.js';
import { fixtureWireBody, sseEventsOf } from './helpers/wire-fixtures.js';

/** Per storage variant: the settle switch and the captured log. */
const state = new Map<string, { failures: SettleFailures; logger: CapturingLogger }>();
const stateOf = (name: string) => {
  let s = state.get(name);
  if (!s) {
    s = { failures: new SettleFailures(), logger: new CapturingLogger() };
    state.set(name, s);
  }
  return s;
};
const NON_STREAM_COST = expectedCostMicros('acme/chat', { prompt: 10122, completion: 1, cached: 9984 });
const STREAM_COST = expectedCostMicros('claude/sonnet', { prompt: 377, completion: 65 });

describeRecords(
  'a settle that fails charges nothing',
  (gw, variant) => {
    const { failures, logger } = stateOf(variant.name);
    let tenant: Tenant;
    const balance = async () => (await gw().storage.getAccount(tenant.account.id))!.balanceMicros;
    const ledgerOf = async (requestId: string) =>
      (await gw().storage.listLedgerEntries(tenant.account.id)).filter((e) => e.requestId === requestId);
    const holds = () => gw().storage.listReservations(tenant.account.id, gw().clock.now());

    async function nonStreaming() {
      gw().mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
      return gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
    }

    // biome-ignore lint/suspicious/noExplicitAny: the terminal chunk carries the additive `gateway` object.
    async function streaming(): Promise<{ requestId: string; chunks: any[] }> {
      gw().mock.enqueue(PATHS.an, {
        kind: 'sse',
        events: sseEventsOf(fixtureWireBody('anthropic-stream-text-then-tool-use.sse')),
      });
      const { data, response } = await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({
          model: 'claude/sonnet',
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        })
        .withResponse();
      // biome-ignore lint/suspicious/noExplicitAny: see above.
      const chunks: any[] = [];
      for await (const chunk of data) chunks.push(chunk);
      return { requestId: response.headers.get('x-gateway-request-id')!, chunks };
    }

    beforeAll(async () => {
      tenant = await gw().newTenant({ name: 'settle' });
    });
    beforeEach(() => {
      gw().mock.reset();
      failures.failNext = 0;
    });

    it('non-streaming: 500 internal_error with a generic message, no ledger entry, the hold released', async () => {
      const before = await balance();
      failures.failNext = 1;
      let caught: unknown;
      try {
        await nonStreaming();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(APIError);
      const error = caught as APIError;
      expect(error.status).toBe(500);
      expect(error.code).toBe('internal_error');
      expect(error.type).toBe('api_error');
      expect(error.message).not.toContain('injected');
      const requestId = error.headers?.get('x-gateway-request-id') ?? '';
      expect(failures.failedRequestIds).toEqual([requestId]);
      expect(gw().mock.received).toHaveLength(1);

      expect(await ledgerOf(requestId)).toEqual([]);
      expect(await balance()).toBe(before);
      expect(await holds()).toEqual([]);
      // The log says what failed by id, never with the error's message.
      const line = logger.lines.find((l) => l.includes(requestId));
      expect(line).toBeDefined();
      expect(line).not.toContain('injected');
    });

    it('the next request settles normally: one ledger entry, the record, the balance moved by the cost', async () => {
      const before = await balance();
      const { data, response } = await nonStreaming();
      const requestId = response.headers.get('x-gateway-request-id')!;
      expect((data as unknown as { gateway: { cost_micros: number } }).gateway.cost_micros).toBe(
        NON_STREAM_COST,
      );
      expect((await ledgerOf(requestId)).map((e) => e.amountMicros)).toEqual([-NON_STREAM_COST]);
      expect(await balance()).toBe(before - NON_STREAM_COST);
      expect(await holds()).toEqual([]);
      const record = await getJson(`${gw().url}/v1/generation?id=${requestId}`, tenant.inferenceKey);
      expect(record.body.data).toMatchObject({ status: 'success', cost_micros: NON_STREAM_COST });
    });

    it('the request whose settle failed is still on record as internal_error, charged nothing', async () => {
      failures.failNext = 1;
      let requestId = '';
      try {
        await nonStreaming();
      } catch (error) {
        requestId = (error as APIError).headers?.get('x-gateway-request-id') ?? '';
      }
      expect(failures.failedRequestIds).toContain(requestId);
      // product.md: every request to an inference endpoint gets a request record, with its error code.
      const looked = await getJson(`${gw().url}/v1/generation?id=${requestId}`, tenant.inferenceKey);
      expect(looked.status, JSON.stringify(looked.body)).toBe(200);
      expect(looked.body.data).toMatchObject({
        id: requestId,
        status: 'error',
        http_status: 500,
        error: { code: 'internal_error' },
        cost_micros: 0,
      });
    });

    it('streaming: the terminal chunk shows cost 0, no ledger entry, the hold released', async () => {
      const before = await balance();
      failures.failNext = 1;
      const { requestId, chunks } = await streaming();
      expect(failures.failedRequestIds).toContain(requestId);
      const terminal = chunks.at(-1);
      expect(terminal.gateway.request_id).toBe(requestId);
      expect(terminal.gateway.cost_micros).toBe(0);
      expect(terminal.gateway.cost_usd).toBe(0);
      // The text still reached the client.
      const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
      expect(text).toBe("I'll check the current weather in Paris for you.");
      expect(await ledgerOf(requestId)).toEqual([]);
      expect(await balance()).toBe(before);
      expect(await holds()).toEqual([]);
    });

    it('after a failed stream settle, the next stream settles normally', async () => {
      const before = await balance();
      const { requestId, chunks } = await streaming();
      expect(chunks.at(-1).gateway.cost_micros).toBe(STREAM_COST);
      expect((await ledgerOf(requestId)).map((e) => e.amountMicros)).toEqual([-STREAM_COST]);
      expect(await balance()).toBe(before - STREAM_COST);
      expect(await holds()).toEqual([]);
    });

    it('a failed request whose settle also fails still answers its own error and releases the hold', async () => {
      const before = await balance();
      failures.failNext = 1;
      gw().mock.enqueue(
        PATHS.flaky,
        ...[1, 2, 3].map(() => ({
          kind: 'json' as const,
          status: 503,
          body: { error: { message: 'busy' } },
        })),
      );
      let caught: unknown;
      try {
        await gw()
          .client(tenant.inferenceKey)
          .chat.completions.create({ model: 'acme/flaky', messages: [{ role: 'user', content: 'x' }] });
      } catch (error) {
        caught = error;
      }
      expect((caught as APIError).status).toBe(502);
      expect((caught as APIError).code).toBe('upstream_error');
      const requestId = (caught as APIError).headers?.get('x-gateway-request-id') ?? '';
      expect(failures.failedRequestIds).toContain(requestId);
      expect(await ledgerOf(requestId)).toEqual([]);
      expect(await balance()).toBe(before);
      expect(await holds()).toEqual([]);
    });
  },
  (variant) => ({
    wrapStorage: (storage) => stateOf(variant.name).failures.wrap(storage),
    logger: stateOf(variant.name).logger,
    serve: false,
  }),
);
