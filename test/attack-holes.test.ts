import type { RequestRecord } from '@tollgate/core';
import { createTestGateway, type FakeUpstream, type TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTenant, type Tenant } from './helpers/tenant.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

/** How long the test provider may stay silent mid-stream (`stream_idle_timeout_ms`). */
const IDLE_MS = 150;

/**
 * The holes an attack run found (issue "Close the money and failure holes"), each shown in-process
 * through `gateway.fetch`, with a scripted upstream: the worst case covers `n` and CJK prompts,
 * deep JSON is refused before anything runs, a stalled stream ends as `upstream_timeout`, "never
 * read" has a line with a test on each side, and a request is on record from its hold on.
 */
describe('attack-run holes (in-process gateway)', () => {
  let gw: TestGateway;
  let tenant: Tenant;
  /** Queues one scripted answer of `provider`. */
  const answer = (provider: 'main' | 'spare', script: (upstream: FakeUpstream) => void) =>
    script(gw.upstream(provider));
  const upstreamCalls = () => gw.upstream('main').calls.length + gw.upstream('spare').calls.length;

  beforeAll(async () => {
    gw = await createTestGateway(
      {
        providers: {
          main: {
            format: 'openai',
            base_url: 'http://upstream.test/main/v1',
            api_key: 'sk-main',
            stream_idle_timeout_ms: IDLE_MS,
          },
          spare: {
            format: 'openai',
            base_url: 'http://upstream.test/spare/v1',
            api_key: 'sk-spare',
            stream_idle_timeout_ms: IDLE_MS,
          },
        },
        models: [
          // 1 micro per prompt token, 2 per completion token.
          {
            id: 'acme/cheap',
            max_output_tokens: 100,
            endpoints: [
              { provider: 'main', upstream_model: 'c-1', pricing: { prompt: '1', completion: '2' } },
            ],
          },
          // Two routes: a stall before the first chunk fails over to the spare.
          {
            id: 'acme/ha',
            max_output_tokens: 100,
            endpoints: [
              { provider: 'main', upstream_model: 'h-1', pricing: { prompt: '1', completion: '2' } },
              { provider: 'spare', upstream_model: 'h-2', pricing: { prompt: '1', completion: '2' } },
            ],
          },
          // 100 micros per completion token: n multiplies a ceiling that matters.
          {
            id: 'acme/dear',
            max_output_tokens: 1_000,
            endpoints: [
              { provider: 'main', upstream_model: 'd-1', pricing: { prompt: '1', completion: '100' } },
            ],
          },
        ],
      },
      { gateway: { attemptsPerRoute: 1 } },
    );
  });

  afterAll(() => gw?.close());

  beforeEach(async () => {
    gw.upstream('main').calls.length = 0;
    gw.upstream('spare').calls.length = 0;
    tenant = await createTenant(gw.storage, { creditMicros: 10_000_000 });
  });

  const post = (body: unknown, key = tenant.inferenceKey) =>
    gw.request('/v1/chat/completions', body, { headers: { authorization: `Bearer ${key}` } });
  const recordOf = (response: Response): Promise<RequestRecord | null> =>
    gw.storage.getRequestRecord(tenant.account.id, response.headers.get('x-gateway-request-id')!);
  const chargesOf = async (requestId: string) =>
    (await gw.storage.listLedgerEntries(tenant.account.id)).filter(
      (e) => e.kind === 'charge' && e.requestId === requestId,
    );

  /** An upstream SSE answer: the given events, then silence (held open) unless `end`. */
  function sseUpstream(events: Record<string, unknown>[], options: { end?: boolean } = {}) {
    return (upstream: FakeUpstream) => upstream.stream(events, { stall: !options.end });
  }
  const delta = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id: 'chatcmpl-x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'c-1',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const completion = (n: number, completionTokens: number) => (upstream: FakeUpstream) =>
    upstream.reply(200, {
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'd-1',
      choices: Array.from({ length: n }, (_, index) => ({
        index,
        message: { role: 'assistant', content: 'ok' },
        finish_reason: 'length',
      })),
      usage: { prompt_tokens: 5, completion_tokens: completionTokens, total_tokens: 5 + completionTokens },
    });

  describe('hole 1: n multiplies the worst case', () => {
    it('n: 128 × max_tokens 10 is held at 1,280 completion tokens: refused 402 where n: 1 passes', async () => {
      // $0.10: 10 completion tokens at 100 micros = 1,000 fit; 1,280 × 100 = 128,000 do not.
      tenant = await createTenant(gw.storage, { creditMicros: 100_000 });
      const messages = [{ role: 'user', content: 'hi' }];

      const many = await post({ model: 'acme/dear', messages, max_tokens: 10, n: 128 });
      expect(many.status).toBe(402);
      expect(((await many.json()) as Json).error.code).toBe('insufficient_credit');
      expect(upstreamCalls()).toBe(0);

      answer('main', completion(1, 10));
      const one = await post({ model: 'acme/dear', messages, max_tokens: 10, n: 1 });
      expect(one.status).toBe(200);
    });

    it('the charge of an n-choice answer stays within its hold (the estimate is bounded by n × ceiling)', async () => {
      answer('main', completion(4, 40));
      const response = await post({
        model: 'acme/dear',
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 10,
        n: 4,
      });
      expect(response.status).toBe(200);
      const body = (await response.json()) as Json;
      // 5 prompt + 40 completion × 100 = 4,005 micros.
      expect(body.gateway.cost_micros).toBe(4_005);
    });

    it.each([0, -1, 1.5, '3', 129, 1e9])(
      'n: %j is refused 400 invalid_request, recorded, never sent',
      async (n) => {
        for (const field of ['n', 'best_of']) {
          const response = await post({
            model: 'acme/cheap',
            messages: [{ role: 'user', content: 'hi' }],
            [field]: n,
          });
          expect(response.status).toBe(400);
          expect(((await response.json()) as Json).error.code).toBe('invalid_request');
          expect(await recordOf(response)).toMatchObject({ status: 'refused', errorCode: 'invalid_request' });
        }
        expect(upstreamCalls()).toBe(0);
      },
    );
  });

  describe('hole 2: deep JSON is refused before anything runs', () => {
    /** JSON text of arrays nested `depth` deep around a string (built as text: too deep to stringify). */
    const nested = (depth: number) => `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;
    const body = (extra: string) =>
      `{"model":"acme/cheap","messages":[{"role":"user","content":"hi"}]${extra}}`;

    it.each([
      ['a message', `,"messages":[{"role":"user","content":${nested(5_000)}}]`],
      ['a tool', `,"tools":[{"type":"function","function":{"name":"f","parameters":${nested(5_000)}}}]`],
      ['a pass-through field', `,"response_format":${nested(5_000)}`],
      // The body's own object is level 1: 128 more levels are one past the bound.
      ['just past the bound', `,"response_format":${nested(128)}`],
    ])('nested in %s: 400 invalid_request with a refusal record, no upstream call', async (_, extra) => {
      const response = await post(body(extra));
      expect(response.status).toBe(400);
      const answer = (await response.json()) as Json;
      expect(answer.error.code).toBe('invalid_request');
      expect(answer.error.message).toMatch(/128 levels/);
      expect(await recordOf(response)).toMatchObject({ status: 'refused', errorCode: 'invalid_request' });
      expect(upstreamCalls()).toBe(0);
    });

    it('nesting at the bound is not refused for its depth', async () => {
      answer('main', completion(1, 1));
      const response = await post(body(`,"response_format":${nested(127)}`));
      expect(response.status).toBe(200);
    });
  });

  describe('hole 9: a CJK prompt is held at a token per character', () => {
    it('a CJK prompt the old ⌈chars / 4⌉ estimate would admit is refused when it cannot be covered', async () => {
      const cjk = '漢'.repeat(2_000);
      // ~2,000 prompt tokens + 10 completion tokens × 2: about 2,030 micros; ⌈chars / 4⌉ said ~530.
      tenant = await createTenant(gw.storage, { creditMicros: 1_000 });
      const response = await post({
        model: 'acme/cheap',
        messages: [{ role: 'user', content: cjk }],
        max_tokens: 10,
      });
      expect(response.status).toBe(402);
      expect(upstreamCalls()).toBe(0);
    });
  });

  describe('hole 5: a provider that stalls', () => {
    it('mid-stream: the stream ends with event: error upstream_timeout and a terminal chunk, charged for what was produced', async () => {
      answer(
        'main',
        sseUpstream([delta({ role: 'assistant', content: '' }), delta({ content: 'Hello world!' })]),
      );
      const started = Date.now();
      const response = await post({
        model: 'acme/cheap',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        max_tokens: 50,
      });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(Date.now() - started).toBeLessThan(30_000);
      const events = text.split('\n\n').filter(Boolean);
      const errorEvent = events.find((e) => e.startsWith('event: error'));
      expect(errorEvent).toBeDefined();
      expect(JSON.parse(errorEvent!.split('data: ')[1]!).error.code).toBe('upstream_timeout');
      const terminal = JSON.parse(events.at(-2)!.slice('data: '.length));
      expect(terminal.choices[0].finish_reason).toBeNull();
      expect(events.at(-1)).toBe('data: [DONE]');

      const record = await recordOf(response);
      // Prompt estimate ⌈32 / 4⌉ = 8; completion ⌈12 / 4⌉ = 3 → 8 + 3 × 2 = 14 micros.
      expect(record).toMatchObject({
        status: 'broken_stream',
        errorCode: 'upstream_timeout',
        completionTokens: 3,
        costMicros: 14,
      });
      expect(await chargesOf(record!.id)).toHaveLength(1);
    });

    it('before the first chunk: the attempt times out and the walk fails over to the next route', async () => {
      answer('main', sseUpstream([]));
      answer(
        'spare',
        sseUpstream([delta({ role: 'assistant', content: 'from spare' }), delta({}, 'stop')], { end: true }),
      );
      const response = await post({
        model: 'acme/ha',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
      });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('from spare');
      const record = await recordOf(response);
      expect(record).toMatchObject({ status: 'success', provider: 'spare', attempts: 2 });
      expect(record?.routingFailures).toEqual([{ provider: 'main', status: null, reason: 'timeout' }]);
    });
  });

  describe('hole 7: "never read" — content counts once the consumer comes back for more', () => {
    /** Opens a stream of two content chunks held open after them, for a consumer to read a few events of. */
    async function openStream() {
      answer(
        'main',
        sseUpstream([
          delta({ role: 'assistant', content: 'abcdefgh' }),
          delta({ content: 'ijklmnop' }),
          delta({ content: 'qrstuvwx' }),
        ]),
      );
      const response = await post({
        model: 'acme/cheap',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        max_tokens: 50,
      });
      expect(response.status).toBe(200);
      return { response, reader: response.body!.getReader() };
    }

    it('gone after taking the first content chunk without coming back: never read, charged the ceiling', async () => {
      const { response, reader } = await openStream();
      await reader.read();
      await reader.cancel();

      const record = await recordOf(response);
      // The ceiling it was reserved against: 8 prompt + 50 × 2 = 108 micros.
      expect(record).toMatchObject({
        status: 'client_closed',
        errorCode: 'client_closed',
        completionTokens: 50,
        costMicros: 108,
      });
      expect(await chargesOf(record!.id)).toHaveLength(1);
    });

    it('gone after coming back for a second chunk: the first was delivered, charged for it alone', async () => {
      const { response, reader } = await openStream();
      await reader.read();
      await reader.read();
      await reader.cancel();

      const record = await recordOf(response);
      // 8 prompt + ⌈8 / 4⌉ = 2 completion × 2 = 12 micros.
      expect(record).toMatchObject({ status: 'client_closed', completionTokens: 2, costMicros: 12 });
    });
  });

  describe('hole 8: a request is on record from its hold on', () => {
    it('while a stream runs its record says in_progress; the settle completes it', async () => {
      answer('main', sseUpstream([delta({ role: 'assistant', content: 'abcd' })]));
      const response = await post({
        model: 'acme/cheap',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        max_tokens: 50,
      });
      expect(await recordOf(response)).toMatchObject({ status: 'in_progress', model: 'acme/cheap' });
      await response.text();
      expect((await recordOf(response))?.status).toBe('broken_stream');
    });
  });
});
