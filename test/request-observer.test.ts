import {
  createGateway,
  type RequestObserver,
  type RequestSummary,
  type UpstreamAttemptFailure,
} from '@tollgate/core';
import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from './helpers/start-e2e-gateway.js';
import { createTenant, type Tenant } from './helpers/tenant.js';

/** In the prompt, the system prompt and the completion: it must reach nothing the observer gets. */
const CANARY = 'CANARY-observer-7f3a9c';
const UPSTREAM_KEY = 'sk-observer-upstream-key';

/**
 * The gateway in-process (`gateway.fetch`, no HTTP server), its upstream a scripted Web `fetch`:
 * what the core tells its `RequestObserver`.
 */
describe('RequestObserver (in-process gateway)', () => {
  let gw: TestGateway;
  let tenant: Tenant;
  const events: { kind: string; value: unknown }[] = [];
  const finished = () => events.filter((e) => e.kind === 'finished').map((e) => e.value as RequestSummary);
  const failures = () =>
    events.filter((e) => e.kind === 'failed').map((e) => e.value as UpstreamAttemptFailure);

  const observer: RequestObserver = {
    requestFinished: (summary) => events.push({ kind: 'finished', value: summary }),
    upstreamAttemptFailed: (failure) => events.push({ kind: 'failed', value: failure }),
    holdTaken: (hold) => events.push({ kind: 'hold', value: hold }),
  };

  beforeAll(async () => {
    gw = await createTestGateway(
      {
        providers: {
          main: { format: 'openai', base_url: 'http://upstream.test/main/v1', api_key: UPSTREAM_KEY },
          spare: { format: 'openai', base_url: 'http://upstream.test/spare/v1', api_key: UPSTREAM_KEY },
        },
        models: [
          {
            id: 'acme/obs',
            max_output_tokens: 100,
            endpoints: [
              { provider: 'main', upstream_model: 'obs-1', pricing: { prompt: '1', completion: '2' } },
              { provider: 'spare', upstream_model: 'obs-2', pricing: { prompt: '1', completion: '2' } },
            ],
          },
        ],
      },
      { gateway: { attemptsPerRoute: 1, observer } },
    );
    tenant = await createTenant(gw.storage);
  });

  afterAll(() => gw?.close());

  beforeEach(() => {
    events.length = 0;
  });

  const chat = (body: Record<string, unknown>, key = tenant.inferenceKey) =>
    gw.request(
      '/v1/chat/completions',
      {
        model: 'acme/obs',
        messages: [
          { role: 'system', content: `You guard ${CANARY}.` },
          { role: 'user', content: `Say ${CANARY}` },
        ],
        ...body,
      },
      { headers: { authorization: `Bearer ${key}` } },
    );

  const completion = {
    id: 'chatcmpl-obs',
    object: 'chat.completion',
    created: 1,
    model: 'obs-1',
    choices: [{ index: 0, message: { role: 'assistant', content: `${CANARY} said` }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
  };
  const text = { 'content-type': 'text/plain;charset=UTF-8' };

  const expectNoCanary = () => {
    const seen = JSON.stringify(events);
    expect(seen).not.toContain(CANARY);
    expect(seen).not.toContain(UPSTREAM_KEY);
    expect(seen).not.toContain(tenant.inferenceKey);
  };

  it('a served chat request: one requestFinished with ids, names, counts and cost, and no content', async () => {
    gw.upstream('main').reply(200, completion);
    const response = await chat({});
    expect(response.status).toBe(200);
    const body = await response.text();
    expect(body).toContain(CANARY); // the canary travelled
    const requestId = response.headers.get('x-gateway-request-id');

    expect(finished()).toHaveLength(1);
    expect(finished()[0]).toEqual({
      requestId,
      method: 'POST',
      endpoint: 'chat.completions',
      accountId: tenant.account.id,
      keyId: tenant.inferenceKeyId,
      model: 'acme/obs',
      provider: 'main',
      status: 200,
      errorCode: null,
      outcome: 'success',
      stream: false,
      promptTokens: 120,
      completionTokens: 30,
      cachedTokens: 0,
      // 120 × $1/M + 30 × $2/M = 180 micros.
      costMicros: 180,
      overrunMicros: 0,
      attempts: 1,
      ttftMs: null,
      durationMs: expect.any(Number),
    });
    expect(events.filter((e) => e.kind === 'hold')).toEqual([{ kind: 'hold', value: { requestId } }]);
    expect(failures()).toEqual([]);
    expectNoCanary();
  });

  it('a failed attempt is told as it fails, then the request once, served by the next route', async () => {
    gw.upstream('main').reply(503, { error: { message: `overloaded while reading ${CANARY}` } });
    gw.upstream('spare').reply(200, completion);
    const response = await chat({});
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-gateway-request-id');
    expect(failures()).toEqual([
      { requestId, provider: 'main', model: 'acme/obs', status: 503, reason: 'http_503', attempt: 1 },
    ]);
    expect(finished()).toHaveLength(1);
    expect(finished()[0]).toMatchObject({ requestId, provider: 'spare', attempts: 2, status: 200 });
    // The failure came before the request's end.
    expect(events.map((e) => e.kind)).toEqual(['hold', 'failed', 'finished']);
    expectNoCanary();
  });

  it('every route failing: each attempt told, and the request once as 502 upstream_error', async () => {
    gw.upstream('main').reply(502, `bad gateway ${CANARY}`, text);
    gw.upstream('spare').reply(500, `bad gateway ${CANARY}`, text);
    const response = await chat({});
    expect(response.status).toBe(502);
    const requestId = response.headers.get('x-gateway-request-id');
    expect(failures().map((f) => [f.provider, f.status, f.reason, f.attempt])).toEqual([
      ['main', 502, 'http_502', 1],
      ['spare', 500, 'http_500', 2],
    ]);
    expect(finished()).toEqual([
      expect.objectContaining({
        requestId,
        status: 502,
        errorCode: 'upstream_error',
        outcome: 'error',
        provider: null,
        attempts: 2,
        costMicros: 0,
      }),
    ]);
    expectNoCanary();
  });

  it('a stream is told once, when it has ended, with its time to first token', async () => {
    const sse = [
      { choices: [{ index: 0, delta: { role: 'assistant', content: `${CANARY} ` } }] },
      { choices: [{ index: 0, delta: { content: 'streamed' }, finish_reason: 'stop' }] },
      { choices: [], usage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } },
    ]
      .map(
        (chunk) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'obs-1', ...chunk })}\n\n`,
      )
      .join('');
    gw.upstream('main').reply(200, `${sse}data: [DONE]\n\n`, { 'content-type': 'text/event-stream' });
    const response = await chat({ stream: true });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-gateway-request-id');
    // Not before the stream has ended: the answer is not settled yet.
    expect(finished()).toEqual([]);
    const text = await response.text();
    expect(text).toContain(CANARY);
    expect(finished()).toEqual([
      expect.objectContaining({
        requestId,
        endpoint: 'chat.completions',
        stream: true,
        status: 200,
        outcome: 'success',
        promptTokens: 50,
        completionTokens: 5,
        ttftMs: expect.any(Number),
      }),
    ]);
    expectNoCanary();
  });

  it('a refusal before the hold (402) and a request without a valid key (401): once each, never charged', async () => {
    const poor = await createTenant(gw.storage, { creditMicros: 0 });
    const refused = await chat({}, poor.inferenceKey);
    expect(refused.status).toBe(402);
    const unknown = await chat({}, 'tg_live_not-a-real-key-000000000000');
    expect(unknown.status).toBe(401);

    expect(finished()).toEqual([
      expect.objectContaining({
        requestId: refused.headers.get('x-gateway-request-id'),
        endpoint: 'chat.completions',
        keyId: poor.inferenceKeyId,
        status: 402,
        errorCode: 'insufficient_credit',
        outcome: 'refused',
        costMicros: 0,
      }),
      expect.objectContaining({
        requestId: unknown.headers.get('x-gateway-request-id'),
        endpoint: 'chat.completions',
        keyId: null,
        status: 401,
        outcome: null,
      }),
    ]);
    expect(events.some((e) => e.kind === 'hold')).toBe(false);
    expectNoCanary();
  });

  it('non-inference requests: once each, with the route, the key, the status and the error code', async () => {
    const key = await gw.gateway.fetch(
      new Request('http://gateway.test/v1/key', {
        headers: { authorization: `Bearer ${tenant.inferenceKey}` },
      }),
    );
    const health = await gw.gateway.fetch(new Request('http://gateway.test/healthz'));
    const missing = await gw.gateway.fetch(new Request('http://gateway.test/v1/nothing-here?secret=1'));
    expect([key.status, health.status, missing.status]).toEqual([200, 200, 404]);
    expect(finished()).toEqual([
      expect.objectContaining({
        requestId: key.headers.get('x-gateway-request-id'),
        method: 'GET',
        endpoint: 'key',
        keyId: tenant.inferenceKeyId,
        accountId: tenant.account.id,
        status: 200,
        errorCode: null,
        outcome: null,
      }),
      expect.objectContaining({ endpoint: 'healthz', status: 200, keyId: null }),
      expect.objectContaining({
        endpoint: 'unmatched',
        path: '/v1/nothing-here',
        status: 404,
        errorCode: 'not_found',
      }),
    ]);
  });

  it('an observer that throws does not change the answer', async () => {
    const throwing = createGateway(gw.storage, gw.gateway.catalogue, {
      logger: silentLogger,
      observer: {
        requestFinished() {
          throw new Error('observer bug');
        },
      },
    });
    const health = await throwing.fetch(new Request('http://gateway.test/healthz'));
    expect(health.status).toBe(200);
    await throwing.close();
  });
});
