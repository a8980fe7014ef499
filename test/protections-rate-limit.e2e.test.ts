import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ApiResponse, call, expectError } from './helpers/http.js';
import {
  chat,
  ok,
  type RoutingGateway,
  startRoutingGateway,
  upstreamPath,
} from './helpers/routing-gateway.js';

/** The deployment default (config `defaults.rate_limit_rpm`) of this file's gateway. */
const DEPLOYMENT_RPM = 4;

let gw: RoutingGateway;

beforeAll(async () => {
  gw = await startRoutingGateway({ defaultRpm: DEPLOYMENT_RPM, serve: false });
});

afterAll(async () => {
  await gw?.close();
});

beforeEach(() => {
  gw.mock.reset();
  gw.mock.setDefault(upstreamPath('p1'), ok());
  gw.clock.reset();
  // Half way through a clock minute, so a run of requests never straddles two counting windows.
  gw.clock.frozenAt = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
});

function chatCall(key: string, body: Record<string, unknown> = chat('acme/paid')): Promise<ApiResponse> {
  return call(gw.url, '/v1/chat/completions', { key, json: body });
}

/** `n` chat requests one after another; their statuses. */
async function sequential(key: string, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await chatCall(key)).status);
  return statuses;
}

function expectRateLimited(response: ApiResponse): void {
  expectError(response, 429, 'rate_limited');
  const retryAfter = response.headers.get('retry-after') ?? '';
  expect(retryAfter, 'Retry-After is whole seconds').toMatch(/^\d+$/);
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(60);
}

describe('per-key requests-per-minute limit, before anything reaches a provider', () => {
  it("a key's own rate_limit_rpm: N requests pass, the next gets 429 rate_limited with Retry-After and never reaches a provider", async () => {
    const tenant = await gw.newTenant({ defaultRpm: 50 });
    const key = await gw.newKey(tenant.account.id, 3);
    expect(await sequential(key.secret, 3)).toEqual([200, 200, 200]);
    expect(gw.mock.received).toHaveLength(3);
    const refused = await chatCall(key.secret);
    expectRateLimited(refused);
    expect(gw.mock.received, 'the refused request was not sent upstream').toHaveLength(3);
    // Nothing charged for the refusal.
    const charges = (await gw.ledger(tenant.account.id)).filter((e) => e.kind === 'charge');
    expect(charges).toHaveLength(3);
    expect(charges.map((e) => e.requestId)).not.toContain(refused.body.error.request_id);
  });

  it('Retry-After is authoritative: after waiting that many seconds the key is admitted again', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 3);
    expect(await sequential(key.secret, 3)).toEqual([200, 200, 200]);
    const refused = await chatCall(key.secret);
    expectRateLimited(refused);
    // Refusals are not counted: asking again at once changes nothing.
    expectRateLimited(await chatCall(key.secret));
    gw.clock.frozenAt! += Number(refused.headers.get('retry-after')) * 1000;
    expect((await chatCall(key.secret)).status).toBe(200);
  });

  it('the 429 has a request record with code rate_limited (GET /v1/generation)', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 1);
    expect((await chatCall(key.secret)).status).toBe(200);
    const refused = await chatCall(key.secret);
    expectRateLimited(refused);
    const record = await call(gw.url, `/v1/generation?id=${refused.body.error.request_id}`, {
      key: key.secret,
    });
    expect(record.status, record.text).toBe(200);
    expect(record.body.data).toMatchObject({
      id: refused.body.error.request_id,
      http_status: 429,
      error: { code: 'rate_limited' },
      cost_micros: 0,
      key_id: key.id,
    });
  });

  it("without a key limit, the account's default rpm applies", async () => {
    const tenant = await gw.newTenant({ defaultRpm: 2 });
    const key = await gw.newKey(tenant.account.id, null);
    expect(await sequential(key.secret, 2)).toEqual([200, 200]);
    expectRateLimited(await chatCall(key.secret));
    expect(gw.mock.received).toHaveLength(2);
  });

  it('without a key or account limit, the deployment default (config defaults.rate_limit_rpm) applies', async () => {
    const tenant = await gw.newTenant({ defaultRpm: null });
    expect(await sequential(tenant.inferenceKey, DEPLOYMENT_RPM)).toEqual(Array(DEPLOYMENT_RPM).fill(200));
    expectRateLimited(await chatCall(tenant.inferenceKey));
    expect(gw.mock.received).toHaveLength(DEPLOYMENT_RPM);
  });

  it("a key's own limit wins over a smaller account default", async () => {
    const tenant = await gw.newTenant({ defaultRpm: 1 });
    const key = await gw.newKey(tenant.account.id, 3);
    expect(await sequential(key.secret, 3)).toEqual([200, 200, 200]);
    expectRateLimited(await chatCall(key.secret));
  });

  it('requests refused by the pre-flight (402) still count', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 3);
    // acme/pricey's worst case (1M output tokens at $100/M) is far above the $10 balance.
    const pricey = await chatCall(key.secret, chat('acme/pricey'));
    expectError(pricey, 402, 'insufficient_credit');
    expectError(await chatCall(key.secret, chat('acme/pricey')), 402, 'insufficient_credit');
    expect((await chatCall(key.secret)).status).toBe(200);
    expectRateLimited(await chatCall(key.secret));
    expect(gw.mock.received).toHaveLength(1);
  });

  it('other refusals after authentication (unknown model, malformed body) count too', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 3);
    expectError(await chatCall(key.secret, chat('acme/no-such-model')), 404, 'model_not_found');
    expectError(await chatCall(key.secret, { model: 'acme/paid', messages: [] }), 400, 'invalid_request');
    expect((await chatCall(key.secret)).status).toBe(200);
    expectRateLimited(await chatCall(key.secret));
  });

  it('over the limit, the 429 wins over every answer that would come before a hold: body, model, credit, a cached answer, an idempotent replay', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 3);
    const cached = { headers: { 'X-Gateway-Cache': 'true' } };
    const replayed = { headers: { 'Idempotency-Key': 'rl-replay-1' } };
    const send = (body: Record<string, unknown>, init: { headers?: Record<string, string> } = {}) =>
      call(gw.url, '/v1/chat/completions', { key: key.secret, json: body, ...init });
    // Three admitted: one kept in the cache, one kept for its idempotency key, one plain.
    expect((await send(chat('acme/paid'), cached)).status).toBe(200);
    expect((await send(chat('acme/paid'), replayed)).status).toBe(200);
    expect((await send(chat('acme/paid'))).status).toBe(200);
    expect(gw.mock.received).toHaveLength(3);

    expectRateLimited(await send({ model: 'acme/paid', messages: [] }));
    expectRateLimited(await send(chat('acme/no-such-model')));
    expectRateLimited(await send(chat('acme/pricey')));
    expectRateLimited(await send(chat('acme/paid'), cached));
    expectRateLimited(await send(chat('acme/paid'), replayed));
    expect(gw.mock.received, 'nothing more went upstream').toHaveLength(3);
  });

  it('under the limit, an answer from the cache and an idempotent replay each count one hit', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 4);
    const send = (headers: Record<string, string>) =>
      call(gw.url, '/v1/chat/completions', { key: key.secret, json: chat('acme/paid'), headers });
    const cached = { 'X-Gateway-Cache': 'true' };
    const replayed = { 'Idempotency-Key': 'rl-replay-2' };
    expect((await send(cached)).status).toBe(200);
    const hit = await send(cached);
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
    expect((await send(replayed)).status).toBe(200);
    expect((await send(replayed)).status).toBe(200);
    expect(gw.mock.received).toHaveLength(2);
    expectRateLimited(await send({}));
  });

  it('reads (/v1/key, /v1/models, /v1/generation, /v1/usage, model endpoints) do not count', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 2);
    const first = await chatCall(key.secret);
    expect(first.status).toBe(200);
    const id = first.headers.get('x-gateway-request-id');
    const reads = [
      '/v1/key',
      '/v1/models',
      `/v1/generation?id=${id}`,
      '/v1/usage?days=1',
      '/v1/models/acme/alpha/endpoints',
    ];
    for (let round = 0; round < 3; round++) {
      for (const path of reads) {
        const response = await call(gw.url, path, { key: key.secret });
        expect(response.status, `${path}: ${response.text}`).toBe(200);
      }
    }
    expect((await chatCall(key.secret)).status).toBe(200);
    expectRateLimited(await chatCall(key.secret));
  });

  it('keys are counted separately, even on one account', async () => {
    const tenant = await gw.newTenant();
    const a = await gw.newKey(tenant.account.id, 1);
    const b = await gw.newKey(tenant.account.id, 1);
    expect((await chatCall(a.secret)).status).toBe(200);
    expectRateLimited(await chatCall(a.secret));
    expect((await chatCall(b.secret)).status).toBe(200);
    expectRateLimited(await chatCall(b.secret));
  });

  it('concurrent requests: exactly N of them are admitted', async () => {
    const tenant = await gw.newTenant();
    const key = await gw.newKey(tenant.account.id, 5);
    const responses = await Promise.all(Array.from({ length: 12 }, () => chatCall(key.secret)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
    for (const response of responses.filter((r) => r.status === 429)) expectRateLimited(response);
    expect(gw.mock.received).toHaveLength(5);
  });
});
