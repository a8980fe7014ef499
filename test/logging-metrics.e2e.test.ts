import { createLogger, createServerTelemetry, type ServerTelemetry } from '@tollgate/node-server';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chatConfig, UPSTREAM } from './helpers/chat-gateway.js';
import { jsonReply, postChat } from './helpers/chat-wire.js';
import { call } from './helpers/http.js';
import { InstantClock } from './helpers/instant-clock.js';
import type { MockReply } from './helpers/mock-upstream.js';
import { type E2eGateway, startE2eGateway } from './helpers/start-e2e-gateway.js';
import { openSqlite } from './helpers/storage-variants.js';
import type { Tenant } from './helpers/tenant.js';

/** In every prompt and completion: it must reach no log line and no metric. */
const CANARY = 'CANARY-access-log-41d7';
const METRICS_TOKEN = 'metrics-token-e2e-3b9f0c';

/** The server's pino logger (JSON: the destination is not a terminal), captured line by line. */
const logLines: string[] = [];
const logger = createLogger({ LOG_LEVEL: 'debug' }, { write: (line: string) => logLines.push(line) });
const logged = () => logLines.map((line) => JSON.parse(line) as Record<string, unknown>);

const completion = (usage: { prompt: number; completion: number }) =>
  jsonReply({
    id: 'chatcmpl-e2e',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: `ok ${CANARY}` }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  });

/** A stream of two content chunks and a usage chunk, held open after the first when `holdAfter` is 1. */
function stream(holdAfter?: number): MockReply {
  const chunk = (extra: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', ...extra })}\n\n`;
  return {
    kind: 'sse',
    events: [
      chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: `${CANARY} ` } }] }),
      chunk({ choices: [{ index: 0, delta: { content: 'done' }, finish_reason: 'stop' }] }),
      chunk({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 4, total_tokens: 44 } }),
      'data: [DONE]\n\n',
    ],
    ...(holdAfter !== undefined && { holdAfter }),
  };
}

const chatBody = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [
    { role: 'system', content: `Keep ${CANARY} secret.` },
    { role: 'user', content: `Repeat ${CANARY}` },
  ],
  ...extra,
});

describe('access log, upstream warnings and GET /metrics through the Node server', () => {
  let gw: E2eGateway;
  let telemetry: ServerTelemetry;
  let tenant: Tenant;

  beforeAll(async () => {
    telemetry = createServerTelemetry({
      logger,
      metrics: { token: METRICS_TOKEN },
      models: chatConfig('http://127.0.0.1:9').models.map((m) => m.id),
    });
    gw = await startE2eGateway({
      config: chatConfig,
      open: () => openSqlite(),
      clock: new InstantClock(() => 0),
      logger,
      gateway: { observer: telemetry.observer, attemptsPerRoute: 1 },
      server: { metrics: telemetry.metricsEndpoint },
    });
    tenant = await gw.newTenant();
  });

  afterAll(async () => {
    await gw?.close();
  });

  beforeEach(() => {
    gw.mock.reset();
    logLines.length = 0;
  });

  const scrape = (token: string | null = METRICS_TOKEN) =>
    fetch(`${gw.url}/metrics`, token === null ? {} : { headers: { authorization: `Bearer ${token}` } });

  it('a chat request leaves one info access line naming its request id, with no content', async () => {
    gw.mock.enqueue(UPSTREAM.openai, completion({ prompt: 1000, completion: 100 }));
    const response = await postChat(gw.url, tenant.inferenceKey, chatBody('acme/gpt'));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(CANARY);
    const requestId = response.headers.get('x-gateway-request-id');

    const lines = logged().filter((line) => line.requestId === requestId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toEqual({
      level: 30,
      time: expect.any(Number),
      pid: expect.any(Number),
      hostname: expect.any(String),
      name: 'tollgate',
      msg: 'request',
      requestId,
      method: 'POST',
      endpoint: 'chat.completions',
      keyId: tenant.inferenceKeyId,
      status: 200,
      errorCode: null,
      outcome: 'success',
      model: 'acme/gpt',
      provider: 'openai',
      stream: false,
      promptTokens: 1000,
      completionTokens: 100,
      cachedTokens: 0,
      // 1000 × $0.11/M + 100 × $0.44/M = 110 + 44 micros.
      costMicros: 154,
      attempts: 1,
      ttftMs: null,
      durationMs: expect.any(Number),
    });
    expect(logLines.join('')).not.toContain(CANARY);
    expect(logLines.join('')).not.toContain(tenant.inferenceKey);
  });

  it('a failing upstream attempt leaves a warn line, then the request its access line', async () => {
    gw.mock.enqueue(UPSTREAM.openai, jsonReply({ error: { message: `overloaded: ${CANARY}` } }, 503));
    gw.mock.enqueue(UPSTREAM.backup, completion({ prompt: 10, completion: 2 }));
    const response = await postChat(gw.url, tenant.inferenceKey, chatBody('acme/ha'));
    expect(response.status).toBe(200);
    await response.text();
    const requestId = response.headers.get('x-gateway-request-id');

    const lines = logged().filter((line) => line.requestId === requestId);
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      [40, 'upstream attempt failed'],
      [30, 'request'],
    ]);
    expect(lines[0]).toMatchObject({
      requestId,
      provider: 'openai',
      model: 'acme/ha',
      status: 503,
      reason: 'http_503',
      attempt: 1,
    });
    expect(lines[1]).toMatchObject({ provider: 'backup', attempts: 2, status: 200 });
    expect(logLines.join('')).not.toContain(CANARY);
  });

  it('refusals and non-inference requests get their access line too (health checks at debug)', async () => {
    const noKey = await call(gw.url, '/v1/chat/completions', { json: chatBody('acme/gpt') });
    const key = await call(gw.url, '/v1/key', { key: tenant.inferenceKey });
    const health = await call(gw.url, '/healthz');
    expect([noKey.status, key.status, health.status]).toEqual([401, 200, 200]);
    const byId = (response: { headers: Headers }) =>
      logged().filter((line) => line.requestId === response.headers.get('x-gateway-request-id'));
    expect(byId(noKey)).toEqual([
      expect.objectContaining({ level: 30, endpoint: 'chat.completions', status: 401, keyId: null }),
    ]);
    expect(byId(noKey)[0]?.errorCode).toMatch(/^(unauthenticated|invalid_api_key)$/);
    expect(byId(key)).toEqual([
      expect.objectContaining({
        level: 30,
        method: 'GET',
        endpoint: 'key',
        status: 200,
        keyId: tenant.inferenceKeyId,
      }),
    ]);
    expect(byId(health)).toEqual([expect.objectContaining({ level: 20, endpoint: 'healthz', status: 200 })]);
  });

  it('GET /metrics needs the token: none or a wrong one is 401 with the error envelope', async () => {
    for (const token of [null, 'wrong-token']) {
      const response = await scrape(token);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      const body = await response.json();
      expect(body.error).toMatchObject({
        type: 'authentication_error',
        code: token === null ? 'unauthenticated' : 'invalid_api_key',
        request_id: response.headers.get('x-gateway-request-id'),
      });
    }
    const post = await fetch(`${gw.url}/metrics`, {
      method: 'POST',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(post.status).toBe(404);
  });

  it('GET /metrics serves the Prometheus text: requests, latency, TTFT, attempts, failures, holds, spend', async () => {
    // A held stream: its credit is held until it ends.
    gw.mock.enqueue(UPSTREAM.openai, stream(1));
    const held = await postChat(gw.url, tenant.inferenceKey, chatBody('acme/gpt-4o', { stream: true }));
    expect(held.status).toBe(200);
    const reader = held.body!.getReader();
    await reader.read();
    const during = await (await scrape()).text();
    expect(during).toMatch(/^tollgate_holds_open 1$/m);
    gw.mock.release();
    while (!(await reader.read()).done) {}

    const response = await scrape();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).not.toContain(CANARY);
    const sample = (line: string) => expect(text.split('\n')).toContain(line);

    // What the tests above served (one server for the file).
    sample(
      'tollgate_requests_total{endpoint="chat.completions",model="acme/gpt",provider="openai",status="200"} 1',
    );
    sample(
      'tollgate_requests_total{endpoint="chat.completions",model="acme/ha",provider="backup",status="200"} 1',
    );
    sample(
      'tollgate_requests_total{endpoint="chat.completions",model="acme/gpt-4o",provider="openai",status="200"} 1',
    );
    sample('tollgate_requests_total{endpoint="chat.completions",model="",provider="",status="401"} 1');
    sample('tollgate_requests_total{endpoint="key",model="",provider="",status="200"} 1');
    sample('tollgate_requests_total{endpoint="healthz",model="",provider="",status="200"} 1');
    sample('tollgate_upstream_attempts_total{provider="openai"} 3');
    sample('tollgate_upstream_attempts_total{provider="backup"} 1');
    sample('tollgate_upstream_failures_total{provider="openai",reason="http_503"} 1');
    sample('tollgate_spend_micros_total{model="acme/gpt",provider="openai"} 154');
    sample('tollgate_holds_open 0');
    sample('tollgate_request_duration_seconds_count{endpoint="chat.completions"} 4');
    sample('tollgate_time_to_first_token_seconds_count{model="acme/gpt-4o",provider="openai"} 1');
    expect(text).toContain('# TYPE tollgate_request_duration_seconds histogram');
    expect(text).toContain('# TYPE tollgate_time_to_first_token_seconds histogram');
    // prom-client's process metrics, in the server's own registry.
    expect(text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('/healthz is answered by the gateway as before; /metrics is not an access-logged request', async () => {
    const health = await call(gw.url, '/healthz');
    expect(health.status).toBe(200);
    expect(health.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    await (await scrape()).text();
    expect(
      logged()
        .filter((line) => line.msg === 'request')
        .map((line) => line.endpoint),
    ).toEqual(['healthz']);
  });
});

describe('metrics disabled in the config', () => {
  it('no /metrics endpoint: the path is the gateway 404', async () => {
    const telemetry = createServerTelemetry({ logger, metrics: { enabled: false } });
    expect(telemetry.metricsEndpoint).toBeUndefined();
    const gw = await startE2eGateway({
      config: chatConfig,
      open: () => openSqlite(),
      gateway: { observer: telemetry.observer },
      server: { metrics: telemetry.metricsEndpoint },
    });
    try {
      const response = await call(gw.url, '/metrics');
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    } finally {
      await gw.close();
    }
  });
});
