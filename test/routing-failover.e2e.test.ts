import type OpenAI from 'openai';
import { APIError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { call } from './helpers/http.js';
import type { MockReply } from './helpers/mock-upstream.js';
import {
  chat,
  completionBody,
  fail,
  ok,
  providersSeen,
  type RoutingGateway,
  type RoutingProvider,
  SLOW_TIMEOUT_MS,
  startRoutingGateway,
  upstreamPath,
} from './helpers/routing-gateway.js';
import type { Tenant } from './helpers/test-gateway.js';
import { fixtureWireBody, readFixture, sseEventsOf } from './helpers/wire-fixtures.js';

/** The recorded OpenAI text stream, event by event (303 events, `[DONE]` last). */
const STREAM_EVENTS = sseEventsOf(fixtureWireBody('openai-chat-stream-text-include-usage.chunks.txt'));

// biome-ignore lint/suspicious/noExplicitAny: the gateway's extra response fields (`gateway`) are untyped in the SDK.
type Served = ChatCompletion & { gateway: any };

let gw: RoutingGateway;
let tenant: Tenant;
let client: OpenAI;

beforeAll(async () => {
  gw = await startRoutingGateway({ serve: false });
  tenant = await gw.newTenant();
  client = gw.client(tenant.inferenceKey);
});

afterAll(async () => {
  await gw?.close();
});

beforeEach(() => {
  gw.mock.reset();
  gw.clock.reset();
});

function script(provider: RoutingProvider, ...replies: MockReply[]): void {
  gw.mock.enqueue(upstreamPath(provider), ...replies);
}

/** A non-streaming completion through the SDK, with the gateway's request id. */
async function complete(body: Record<string, unknown>): Promise<{ data: Served; requestId: string }> {
  const { data, response } = await client.chat.completions
    .create(body as unknown as ChatCompletionCreateParamsNonStreaming)
    .withResponse();
  return { data: data as Served, requestId: response.headers.get('x-gateway-request-id') ?? '' };
}

/** The SDK error of a request expected to fail. */
async function refusal(body: Record<string, unknown>): Promise<APIError> {
  try {
    await client.chat.completions.create(body as unknown as ChatCompletionCreateParamsNonStreaming);
  } catch (error) {
    expect(error).toBeInstanceOf(APIError);
    return error as APIError;
  }
  throw new Error('the request succeeded, a failure was expected');
}

function requestIdOf(error: APIError): string {
  const id = error.headers?.get('x-gateway-request-id') ?? '';
  expect(id).toMatch(/^req_/);
  return id;
}

/** `GET /v1/generation?id=` as the tenant sees it. */
// biome-ignore lint/suspicious/noExplicitAny: the generation view is read field by field.
async function generation(id: string): Promise<any> {
  const response = await call(gw.url, `/v1/generation?id=${encodeURIComponent(id)}`, {
    key: tenant.inferenceKey,
  });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

async function ledgerEntriesOf(requestId: string) {
  return (await gw.ledger(tenant.account.id)).filter((entry) => entry.requestId === requestId);
}

describe('routing rules (spec "Limits"), over HTTP with the official SDK', () => {
  it('rule 1: a route gets its own attempts (3 by default) before the walk moves to the next route', async () => {
    script('p1', fail(503), fail(503), fail(503));
    script('p2', ok('from p2'));
    const { data, requestId } = await complete(chat('acme/alpha'));
    expect(data.choices[0]?.message.content).toBe('from p2');
    expect(data.gateway).toMatchObject({ provider: 'p2', attempts: 4, model: 'acme/alpha' });
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1', 'p1', 'p2']);
    expect(gw.clock.waits).toHaveLength(2);
    const record = await generation(requestId);
    expect(record.attempts).toBe(4);
    expect(record.routing.failures).toEqual([
      { provider: 'p1', status: 503, reason: 'http_503' },
      { provider: 'p1', status: 503, reason: 'http_503 (try 2)' },
      { provider: 'p1', status: 503, reason: 'http_503 (try 3)' },
    ]);
  });

  it('rule 1: with `models`, every provider of the first model is tried before the next model, which then serves', async () => {
    for (const p of ['p1', 'p2', 'p3'] as const) script(p, fail(503), fail(503), fail(503));
    script('b1', ok('from beta'));
    const { data, requestId } = await complete(chat('acme/alpha', { models: ['acme/beta'] }));
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1', 'p1', 'p2', 'p2', 'p2', 'p3', 'p3', 'p3', 'b1']);
    expect(gw.mock.received.at(-1)?.body.model).toBe('beta-b1');
    // The response's `model` is the model that served, not the one asked for.
    expect(data.model).toBe('acme/beta');
    expect(data.gateway).toMatchObject({
      model: 'acme/beta',
      requested_model: 'acme/alpha',
      provider: 'b1',
      attempts: 10,
    });
    const record = await generation(requestId);
    expect(record).toMatchObject({
      model: 'acme/beta',
      requested_model: 'acme/alpha',
      provider: 'b1',
      attempts: 10,
      status: 'success',
    });
    expect(record.routing.failures.map((f: { provider: string }) => f.provider)).toEqual([
      'p1',
      'p1',
      'p1',
      'p2',
      'p2',
      'p2',
      'p3',
      'p3',
      'p3',
    ]);
  });

  it('rule 1: the `models` chain is walked in the order given, each model with its own routes', async () => {
    script('p1', fail(501));
    script('b1', fail(501));
    script('b2', fail(501));
    script('p1', ok('from alpha'));
    const { data } = await complete(chat('acme/paid', { models: ['acme/beta', 'acme/alpha'] }));
    expect(gw.mock.received.map((r) => r.body.model)).toEqual(['paid-p1', 'beta-b1', 'beta-b2', 'alpha-p1']);
    expect(data.model).toBe('acme/alpha');
    expect(data.choices[0]?.message.content).toBe('from alpha');
  });

  it.each([408, 425, 429, 500, 502, 503, 504])(
    'rule 2: an upstream %i is retried on the same route',
    async (status) => {
      script('p1', fail(status), ok('second try'));
      script('p2', ok('must not be used'));
      const { data, requestId } = await complete(chat('acme/alpha'));
      expect(data.choices[0]?.message.content).toBe('second try');
      expect(providersSeen(gw.mock)).toEqual(['p1', 'p1']);
      expect(data.gateway).toMatchObject({ provider: 'p1', attempts: 2 });
      expect(gw.clock.waits).toHaveLength(1);
      expect((await generation(requestId)).routing.failures).toEqual([
        { provider: 'p1', status, reason: `http_${status}` },
      ]);
    },
  );

  it.each([501, 505])(
    'rule 3: an upstream %i fails over to the next route without a retry',
    async (status) => {
      script('p1', fail(status), ok('must not be used'));
      script('p2', ok('from p2'));
      const { data, requestId } = await complete(chat('acme/alpha'));
      expect(data.choices[0]?.message.content).toBe('from p2');
      expect(providersSeen(gw.mock)).toEqual(['p1', 'p2']);
      expect(gw.clock.waits).toEqual([]);
      expect((await generation(requestId)).routing.failures).toEqual([
        { provider: 'p1', status, reason: `http_${status}` },
      ]);
    },
  );

  it.each([400, 401, 403, 404, 409, 413, 422])(
    'rule 4: an upstream %i is returned at once as 400 invalid_request naming the provider, with its message; no retry, no failover',
    async (status) => {
      script('p1', fail(status, {}, 'the provider says no'), ok('must not be used'));
      script('p2', ok('must not be used'));
      const error = await refusal(chat('acme/alpha'));
      expect(error.status).toBe(400);
      expect(error.code).toBe('invalid_request');
      expect(error.type).toBe('invalid_request_error');
      const message = (error.error as { message: string }).message;
      expect(message).toContain('p1');
      expect(message).toContain(String(status));
      expect(message).toContain('the provider says no');
      expect(providersSeen(gw.mock)).toEqual(['p1']);
      expect(gw.clock.waits).toEqual([]);
      const id = requestIdOf(error);
      expect(await ledgerEntriesOf(id)).toEqual([]);
      expect((await generation(id)).routing.failures).toEqual([
        { provider: 'p1', status, reason: `http_${status}` },
      ]);
    },
  );

  it("rule 4: a recorded OpenAI 400 (unsupported parameter) reaches the caller as 400 with the provider's own message", async () => {
    script('p1', {
      kind: 'raw',
      status: 400,
      body: readFixture('openai-error-400-unsupported-parameter.json'),
    });
    script('p2', ok('must not be used'));
    const error = await refusal(chat('acme/alpha', { max_tokens: 10 }));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
    expect((error.error as { message: string }).message).toContain(
      "Unsupported parameter: 'max_tokens' is not supported with this model.",
    );
    expect(providersSeen(gw.mock)).toEqual(['p1']);
  });

  it('rule 5: a dropped connection (reset) is retried on the same route like a 5xx', async () => {
    script('p1', { kind: 'reset' }, ok('after the reset'));
    script('p2', ok('must not be used'));
    const { data, requestId } = await complete(chat('acme/alpha'));
    expect(data.choices[0]?.message.content).toBe('after the reset');
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1']);
    expect(gw.clock.waits).toHaveLength(1);
    expect((await generation(requestId)).routing.failures).toEqual([
      { provider: 'p1', status: null, reason: 'network_error' },
    ]);
  });

  it('rule 5: a per-attempt timeout fails over to the next route at once, without a retry or a wait', async () => {
    script('slow', { kind: 'hang' }, ok('must not be used'));
    script('p2', ok('after the timeout'));
    const { data, requestId } = await complete(chat('acme/slowpoke'));
    expect(data.choices[0]?.message.content).toBe('after the timeout');
    expect(providersSeen(gw.mock)).toEqual(['slow', 'p2']);
    expect(gw.clock.waits).toEqual([]);
    const record = await generation(requestId);
    expect(record.attempts).toBe(2);
    expect(record.routing.failures).toEqual([{ provider: 'slow', status: null, reason: 'timeout' }]);
  });

  it('rule 5: timeout_ms bounds the time to the first byte, not the whole answer (a slow body is not a timeout)', async () => {
    // `slow` (timeout_ms 300) sends its status line and the first half of the body at once, then
    // holds the rest. Its first byte came in time, so the attempt must not be cut at 300 ms.
    const body = JSON.stringify(completionBody('slow but steady'));
    const half = Math.floor(body.length / 2);
    script('slow', { kind: 'sse', events: [body.slice(0, half), body.slice(half)], holdAfter: 1 });
    script('p2', ok('failed over'));
    const pending = complete(chat('acme/slowpoke'));
    await vi.waitFor(() => expect(gw.mock.received).toHaveLength(1), { timeout: 10_000, interval: 10 });
    // Four times the per-attempt timeout: long enough to see a failover if one were coming.
    const failedOver = await vi
      .waitFor(() => expect(gw.mock.received).toHaveLength(2), { timeout: SLOW_TIMEOUT_MS * 4, interval: 20 })
      .then(
        () => true,
        () => false,
      );
    gw.mock.release();
    const { data } = await pending;
    expect(failedOver, `the gateway failed over to ${providersSeen(gw.mock).join(' → ')}`).toBe(false);
    expect(data.gateway.provider).toBe('slow');
    expect(data.choices[0]?.message.content).toBe('slow but steady');
  });

  it('rule 6: once the first byte of a stream reached the client there is no retry and no failover', async () => {
    // The provider sends 3 events, holds until the client has read a chunk, then drops the connection.
    script(
      'p1',
      { kind: 'sse', events: STREAM_EVENTS, holdAfter: 3, breakAfter: 5 },
      { kind: 'sse', events: STREAM_EVENTS },
    );
    script('p2', { kind: 'sse', events: STREAM_EVENTS });
    const { data: stream, response } = await client.chat.completions
      .create({ ...chat('acme/alpha'), stream: true } as ChatCompletionCreateParamsStreaming)
      .withResponse();
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    const chunks: ChatCompletionChunk[] = [first.value as ChatCompletionChunk];
    gw.mock.release();
    let broke: unknown = null;
    try {
      for (let i = 0; i < STREAM_EVENTS.length; i++) {
        const next = await iterator.next();
        if (next.done) break;
        chunks.push(next.value);
      }
    } catch (error) {
      broke = error;
    }
    expect(broke, 'the SDK surfaces the `event: error` of the broken stream').toBeInstanceOf(APIError);
    expect(chunks.length).toBeLessThan(STREAM_EVENTS.length);
    expect(providersSeen(gw.mock)).toEqual(['p1']);
    expect(gw.clock.waits).toEqual([]);
    const record = await generation(response.headers.get('x-gateway-request-id') ?? '');
    expect(record).toMatchObject({ status: 'broken_stream', attempts: 1, provider: 'p1' });
    expect(record.routing.failures).toEqual([]);
  });

  it('rule 6 (counterpart): a stream that breaks before its first chunk is still retried', async () => {
    script(
      'p1',
      { kind: 'sse', events: STREAM_EVENTS, breakAfter: 0 },
      { kind: 'sse', events: STREAM_EVENTS },
    );
    const { data: stream, response } = await client.chat.completions
      .create({ ...chat('acme/alpha'), stream: true } as ChatCompletionCreateParamsStreaming)
      .withResponse();
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(100);
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1']);
    const record = await generation(response.headers.get('x-gateway-request-id') ?? '');
    expect(record).toMatchObject({ status: 'success', attempts: 2 });
    expect(record.routing.failures).toEqual([{ provider: 'p1', status: null, reason: 'network_error' }]);
  });

  it('rule 7: a `:free` model id is served only by zero-price routes, at no charge', async () => {
    script('p1', ok('must not be used'));
    script('gratis', ok('free answer'));
    const { data, requestId } = await complete(chat('acme/mixed:free'));
    expect(data.choices[0]?.message.content).toBe('free answer');
    expect(providersSeen(gw.mock)).toEqual(['gratis']);
    expect(data.gateway).toMatchObject({ provider: 'gratis', cost_micros: 0 });
    expect(data.gateway.waived).toBeUndefined();
    expect(await ledgerEntriesOf(requestId)).toEqual([]);
  });

  it('rule 7: a `:free` request never falls back to a paid route, even when the free one fails', async () => {
    script('gratis', fail(503), fail(503), fail(503));
    script('p1', ok('must not be used'));
    const error = await refusal(chat('acme/mixed:free'));
    expect(error.status).toBe(502);
    expect(providersSeen(gw.mock)).toEqual(['gratis', 'gratis', 'gratis']);
  });

  it('rule 7: a `:free` model id with no zero-price route → 402 no_free_route, nothing sent upstream', async () => {
    script('p1', ok('must not be used'));
    const error = await refusal(chat('acme/paid:free'));
    expect(error.status).toBe(402);
    expect(error.code).toBe('no_free_route');
    expect(gw.mock.received).toEqual([]);
  });
});

describe('waits between attempts', () => {
  it("an upstream 429's Retry-After in seconds takes precedence over the backoff", async () => {
    script('p1', fail(429, { 'Retry-After': '7' }), ok());
    await complete(chat('acme/alpha'));
    expect(gw.clock.waits).toEqual([7000]);
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1']);
  });

  it("an upstream 429's Retry-After as an HTTP-date takes precedence over the backoff", async () => {
    // Frozen on a whole second, so the date form (second precision) names an exact wait.
    gw.clock.frozenAt = Math.floor(Date.now() / 1000) * 1000;
    script('p1', fail(429, { 'Retry-After': new Date(gw.clock.frozenAt + 9000).toUTCString() }), ok());
    await complete(chat('acme/alpha'));
    expect(gw.clock.waits).toEqual([9000]);
  });

  it('backoff waits are full jitter: uniform in [0, 250 ms) before the 2nd attempt, [0, 500 ms) before the 3rd', async () => {
    for (let round = 0; round < 5; round++) {
      gw.clock.reset();
      gw.mock.reset();
      script('p1', fail(503), fail(502), ok());
      await complete(chat('acme/alpha'));
      expect(gw.clock.waits).toHaveLength(2);
      const [first, second] = gw.clock.waits as [number, number];
      expect(first).toBeGreaterThanOrEqual(0);
      expect(first).toBeLessThan(250);
      expect(second).toBeGreaterThanOrEqual(0);
      expect(second).toBeLessThan(500);
    }
  });

  it('backoff waits reach the top of their range when chance says so (249 ms, then 499 ms)', async () => {
    gw.clock.randoms = [0.999999];
    script('p1', fail(503), fail(503), ok());
    await complete(chat('acme/alpha'));
    expect(gw.clock.waits).toEqual([249, 499]);
  });
});

describe('deadlines of the whole walk (60 s non-streaming, 300 s streaming)', () => {
  it('a Retry-After on a 503 takes precedence over the backoff too', async () => {
    script('p1', fail(503, { 'Retry-After': '2' }), ok());
    await complete(chat('acme/alpha'));
    expect(gw.clock.waits).toEqual([2000]);
  });

  it('a wait that would use up what is left of the 60 s deadline fails over at once', async () => {
    // Time moves only by the waits taken: 45 s fits in 60 s; a second 45 s would not.
    gw.clock.frozenAt = Date.now();
    script(
      'p1',
      fail(429, { 'Retry-After': '45' }),
      fail(429, { 'Retry-After': '45' }),
      ok('must not be used'),
    );
    script('p2', ok('from p2'));
    const { data, requestId } = await complete(chat('acme/alpha'));
    expect(data.gateway.provider).toBe('p2');
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1', 'p2']);
    expect(gw.clock.waits).toEqual([45_000]);
    expect((await generation(requestId)).routing.failures).toEqual([
      { provider: 'p1', status: 429, reason: 'http_429' },
      { provider: 'p1', status: 429, reason: 'http_429 (try 2)' },
    ]);
  });

  it('a wait longer than the whole 60 s deadline is never taken: the walk fails over at once', async () => {
    gw.clock.frozenAt = Date.now();
    script('p1', fail(503, { 'Retry-After': '120' }), ok('must not be used'));
    script('p2', ok('from p2'));
    const { data } = await complete(chat('acme/alpha'));
    expect(data.gateway.provider).toBe('p2');
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p2']);
    expect(gw.clock.waits).toEqual([]);
  });

  it('a streaming walk has 300 s: a 200 s wait is taken, a second one fails over', async () => {
    gw.clock.frozenAt = Date.now();
    script('p1', fail(503, { 'Retry-After': '200' }), fail(503, { 'Retry-After': '200' }), {
      kind: 'sse',
      events: STREAM_EVENTS,
    });
    script('p2', { kind: 'sse', events: STREAM_EVENTS });
    const stream = await client.chat.completions.create({
      ...chat('acme/alpha'),
      stream: true,
    } as ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(100);
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1', 'p2']);
    expect(gw.clock.waits).toEqual([200_000]);
  });
});

describe('streaming requests follow the same rules until the first byte', () => {
  it('rule 2 (stream): an upstream 503 before the first byte is retried on the same route', async () => {
    script('p1', fail(503), { kind: 'sse', events: STREAM_EVENTS });
    const stream = await client.chat.completions.create({
      ...chat('acme/alpha'),
      stream: true,
    } as ChatCompletionCreateParamsStreaming);
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(100);
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1']);
  });

  it('rule 4 (stream): an upstream 422 is returned at once as 400 invalid_request, no failover', async () => {
    script('p1', fail(422, {}, 'bad stream request'));
    script('p2', { kind: 'sse', events: STREAM_EVENTS });
    let caught: unknown = null;
    try {
      await client.chat.completions.create({
        ...chat('acme/alpha'),
        stream: true,
      } as ChatCompletionCreateParamsStreaming);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(APIError);
    expect((caught as APIError).status).toBe(400);
    expect((caught as APIError).code).toBe('invalid_request');
    expect(((caught as APIError).error as { message: string }).message).toContain('bad stream request');
    expect(providersSeen(gw.mock)).toEqual(['p1']);
  });
});

describe('how a failed walk ends', () => {
  it('every route ending in 429 → 429 rate_limited with Retry-After (the smallest wait a provider asked for)', async () => {
    script('b1', fail(429, { 'Retry-After': '5' }), fail(429, { 'Retry-After': '5' }), fail(429));
    script('b2', fail(429, { 'Retry-After': '3' }), fail(429), fail(429, { 'Retry-After': '9' }));
    const error = await refusal(chat('acme/beta'));
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limited');
    expect(error.type).toBe('rate_limit_error');
    expect(error.headers?.get('retry-after')).toBe('3');
    expect(providersSeen(gw.mock)).toEqual(['b1', 'b1', 'b1', 'b2', 'b2', 'b2']);
    expect(await ledgerEntriesOf(requestIdOf(error))).toEqual([]);
  });

  it('every route ending in 429 without Retry-After → 429 with a Retry-After in whole seconds ≥ 1', async () => {
    script('b1', fail(429), fail(429), fail(429));
    script('b2', fail(429), fail(429), fail(429));
    const error = await refusal(chat('acme/beta'));
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limited');
    const retryAfter = error.headers?.get('retry-after') ?? '';
    expect(retryAfter).toMatch(/^\d+$/);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('every route failing with 5xx → 502 upstream_error, not charged (no ledger entry, balance unchanged)', async () => {
    const before = (await gw.storage.getAccount(tenant.account.id))!.balanceMicros;
    script('p1', fail(500), fail(500), fail(500));
    script('p2', fail(502), fail(502), fail(502));
    script('p3', fail(503), fail(503), fail(503));
    const error = await refusal(chat('acme/alpha'));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
    expect(error.type).toBe('api_error');
    expect(providersSeen(gw.mock)).toHaveLength(9);
    const id = requestIdOf(error);
    expect(await ledgerEntriesOf(id)).toEqual([]);
    expect((await gw.storage.getAccount(tenant.account.id))!.balanceMicros).toBe(before);
    expect(await gw.storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
    const record = await generation(id);
    expect(record).toMatchObject({ attempts: 9, cost_micros: 0, http_status: 502 });
    expect(record.error).toMatchObject({ code: 'upstream_error' });
    expect(record.routing.failures).toHaveLength(9);
  });

  it('every route ENDING in 429 (after an earlier 503 on the same route) → 429 rate_limited, not 502', async () => {
    // product.md: "Every route ended in upstream 429 → 429 rate_limited"; b1 ends in 429 too.
    script('b1', fail(503), fail(429, { 'Retry-After': '4' }), fail(429, { 'Retry-After': '4' }));
    script('b2', fail(429, { 'Retry-After': '4' }), fail(429), fail(429));
    const error = await refusal(chat('acme/beta'));
    expect(providersSeen(gw.mock)).toEqual(['b1', 'b1', 'b1', 'b2', 'b2', 'b2']);
    expect(error.status).toBe(429);
    expect(error.code).toBe('rate_limited');
    expect(error.headers?.get('retry-after')).toBe('4');
  });

  it('every route ENDING in a timeout (after an earlier 503 on the same route) → 504 upstream_timeout, not 502', async () => {
    // product.md: "Every route ended in a timeout → 504"; `slow` ends in a timeout on its 2nd try.
    script('slow', fail(503), { kind: 'hang' });
    script('slow2', { kind: 'hang' });
    const error = await refusal(chat('acme/sluggish'));
    expect(providersSeen(gw.mock)).toEqual(['slow', 'slow', 'slow2']);
    expect((await generation(requestIdOf(error))).routing.failures).toEqual([
      { provider: 'slow', status: 503, reason: 'http_503' },
      { provider: 'slow', status: null, reason: 'timeout (try 2)' },
      { provider: 'slow2', status: null, reason: 'timeout' },
    ]);
    expect(error.status).toBe(504);
    expect(error.code).toBe('upstream_timeout');
  });

  it('a mix of 429 and 5xx → 502 upstream_error (429 only when every route ended in 429)', async () => {
    script('b1', fail(429), fail(429), fail(429));
    script('b2', fail(503), fail(503), fail(503));
    const error = await refusal(chat('acme/beta'));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
  });

  it('every route timing out → 504 upstream_timeout', async () => {
    script('slow', { kind: 'hang' });
    script('slow2', { kind: 'hang' });
    const error = await refusal(chat('acme/sluggish'));
    expect(error.status).toBe(504);
    expect(error.code).toBe('upstream_timeout');
    expect(providersSeen(gw.mock)).toEqual(['slow', 'slow2']);
    expect((await generation(requestIdOf(error))).routing.failures).toEqual([
      { provider: 'slow', status: null, reason: 'timeout' },
      { provider: 'slow2', status: null, reason: 'timeout' },
    ]);
  });

  it('a mix of a timeout and 5xx → 502 upstream_error (not 504)', async () => {
    script('slow', { kind: 'hang' });
    script('p2', fail(503), fail(503), fail(503));
    const error = await refusal(chat('acme/slowpoke'));
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
  });
});

describe('`provider` preferences change which upstream is asked', () => {
  it('provider.order puts the named providers first', async () => {
    script('p3', fail(501));
    script('p2', ok('from p2'));
    const { data } = await complete(chat('acme/alpha', { provider: { order: ['p3', 'p2'] } }));
    expect(providersSeen(gw.mock)).toEqual(['p3', 'p2']);
    expect(data.gateway.provider).toBe('p2');
  });

  it('provider.ignore skips the named providers', async () => {
    script('p1', ok('must not be used'));
    script('p2', ok('from p2'));
    await complete(chat('acme/alpha', { provider: { ignore: ['p1'] } }));
    expect(providersSeen(gw.mock)).toEqual(['p2']);
  });

  it('provider.only keeps only the named providers (no failover beyond them)', async () => {
    script('p3', fail(501));
    script('p1', ok('must not be used'));
    script('p2', ok('must not be used'));
    const error = await refusal(chat('acme/alpha', { provider: { only: ['p3'] } }));
    expect(error.status).toBe(502);
    expect(providersSeen(gw.mock)).toEqual(['p3']);
  });

  it("provider.sort: 'price' tries the cheapest route first, then the next cheapest", async () => {
    script('p2', fail(501));
    script('p1', ok('from p1'));
    const { data } = await complete(chat('acme/alpha', { provider: { sort: 'price' } }));
    expect(providersSeen(gw.mock)).toEqual(['p2', 'p1']);
    expect(data.gateway.provider).toBe('p1');
  });

  it('provider.allow_fallbacks: false keeps to the first route (its own retries only)', async () => {
    script('p1', fail(503), fail(503), fail(503));
    script('p2', ok('must not be used'));
    const error = await refusal(chat('acme/alpha', { provider: { allow_fallbacks: false } }));
    expect(error.status).toBe(502);
    expect(providersSeen(gw.mock)).toEqual(['p1', 'p1', 'p1']);
  });

  it.each([
    ['provider.sort', { provider: { sort: 'cheapest' } }],
    ['provider.order', { provider: { order: ['nobody'] } }],
    ['provider.allow_fallbacks', { provider: { allow_fallbacks: 'no' } }],
    ['models', { models: 'acme/beta' }],
  ])('an unusable %s → 400 invalid_request naming the field, nothing sent upstream', async (field, extra) => {
    script('p1', ok('must not be used'));
    const error = await refusal(chat('acme/alpha', extra));
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
    expect((error.error as { message: string }).message).toContain(field);
    expect(gw.mock.received).toEqual([]);
  });
});

describe('GET /v1/generation after failover', () => {
  it('shows attempts, every failure with reasons http_503 / (try 2) / (try 3) / network_error / timeout, and requested vs served model', async () => {
    script('p1', fail(503), fail(503), fail(503));
    // p2 serves both alpha (3 resets) and slowpoke (the answer), in that order.
    script('p2', { kind: 'reset' }, { kind: 'reset' }, { kind: 'reset' }, ok('finally'));
    script('p3', fail(501));
    script('slow', { kind: 'hang' });
    const { data, requestId } = await complete(chat('acme/alpha', { models: ['acme/slowpoke'] }));
    expect(data.model).toBe('acme/slowpoke');
    expect(data.choices[0]?.message.content).toBe('finally');
    expect(gw.mock.received.map((r) => r.body.model)).toEqual([
      'alpha-p1',
      'alpha-p1',
      'alpha-p1',
      'alpha-p2',
      'alpha-p2',
      'alpha-p2',
      'alpha-p3',
      'slowpoke-slow',
      'slowpoke-p2',
    ]);
    const record = await generation(requestId);
    expect(record).toMatchObject({
      id: requestId,
      status: 'success',
      model: 'acme/slowpoke',
      requested_model: 'acme/alpha',
      provider: 'p2',
      attempts: 9,
    });
    expect(record.routing.failures).toEqual([
      { provider: 'p1', status: 503, reason: 'http_503' },
      { provider: 'p1', status: 503, reason: 'http_503 (try 2)' },
      { provider: 'p1', status: 503, reason: 'http_503 (try 3)' },
      { provider: 'p2', status: null, reason: 'network_error' },
      { provider: 'p2', status: null, reason: 'network_error (try 2)' },
      { provider: 'p2', status: null, reason: 'network_error (try 3)' },
      { provider: 'p3', status: 501, reason: 'http_501' },
      { provider: 'slow', status: null, reason: 'timeout' },
    ]);
    // Charged once, for the answer that was served.
    expect(await ledgerEntriesOf(requestId)).toHaveLength(1);
  });
});

describe('backoff cap (a gateway with 7 attempts per route)', () => {
  let seven: RoutingGateway;
  let sevenKey: string;
  beforeAll(async () => {
    seven = await startRoutingGateway({ attemptsPerRoute: 7, serve: false });
    sevenKey = (await seven.newTenant()).inferenceKey;
  });
  afterAll(async () => {
    await seven?.close();
  });

  it('the full-jitter ceiling starts at 250 ms, doubles, and is capped at 4 s', async () => {
    seven.clock.randoms = [0.999999];
    seven.mock.enqueue(upstreamPath('p1'), ...Array.from({ length: 6 }, () => fail(503)), ok());
    const completion = await seven
      .client(sevenKey)
      .chat.completions.create(chat('acme/alpha') as ChatCompletionCreateParamsNonStreaming);
    expect((completion as Served).gateway.attempts).toBe(7);
    expect(seven.clock.waits).toEqual([249, 499, 999, 1999, 3999, 3999]);
  });
});
