import { createApiKey, type GatewayConfigInput } from '@tollgate/core';
import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openaiCompletion } from './helpers/chat-wire.js';
import { createTenant, type Tenant } from './helpers/tenant.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

/**
 * Windows on key limits (product.md "Windows on key limits"), in-process on SQLite: `limit_reset`
 * on POST /v1/keys and PATCH /v1/keys/{id}, the read-out fields of every key view, the 402 naming the
 * window and when it resets, and 100 concurrent requests against a daily cap covering 10 (exactly 10
 * admitted). The gateway's clock is frozen on a Thursday, 2031-03-06 12:00 UTC.
 */
const NOON = Date.parse('2031-03-06T12:00:00Z');
const config: GatewayConfigInput = {
  providers: { main: { format: 'openai', base_url: 'http://upstream.test/v1', api_key: 'sk-main' } },
  models: [
    {
      id: 'acme/fast',
      max_output_tokens: 100,
      endpoints: [{ provider: 'main', upstream_model: 'f-1', pricing: { prompt: '1', completion: '2' } }],
    },
  ],
};
const CHAT = { model: 'acme/fast', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };

describe('key limit windows (in-process gateway, SQLite)', () => {
  let gw: TestGateway;
  let tenant: Tenant;

  beforeAll(async () => {
    // The test clock stands still at NOON until the test moves it.
    gw = await createTestGateway(config, { startAt: NOON });
    gw.upstream('main').always(
      200,
      openaiCompletion('ok', { prompt_tokens: 5, completion_tokens: 2 }, 'f-1'),
    );
    tenant = await createTenant(gw.storage);
  });
  afterAll(() => gw?.close());

  const api = async (method: string, path: string, body?: unknown, key = tenant.provisioningKey) => {
    const response = await gw.request(path, body, { method, headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: (await response.json()) as Json };
  };
  const chat = (secret: string) =>
    gw.request('/v1/chat/completions', CHAT, { headers: { authorization: `Bearer ${secret}` } });

  /** The worst case one CHAT request holds, read from the 402 of a key capped below it. */
  async function worstCaseMicros(): Promise<number> {
    const { secret } = await createApiKey(gw.storage, {
      accountId: tenant.account.id,
      name: 'tiny',
      scope: 'inference',
      env: 'live',
      spendLimitMicros: 1,
    });
    const body = (await (await chat(secret)).json()) as Json;
    const usd = /may cost up to \$([0-9]+\.[0-9]+)/.exec(body.error.message)![1]!;
    return Math.round(Number(usd) * 1_000_000);
  }

  it('POST /v1/keys takes limit_reset; every key view shows the window read-outs', async () => {
    const created = await api('POST', '/v1/keys', {
      name: 'daily',
      spend_limit_usd: 5,
      limit_reset: 'daily',
    });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({
      limit_reset: 'daily',
      limit_remaining: 5,
      usage_daily: 0,
      usage_weekly: 0,
      usage_monthly: 0,
      limit_resets_at: '2031-03-07T00:00:00.000Z',
    });
    const id = created.body.data.id;
    const one = await api('GET', `/v1/keys/${id}`);
    expect(one.body.data).toMatchObject({
      limit_reset: 'daily',
      limit_resets_at: '2031-03-07T00:00:00.000Z',
    });
    const list = await api('GET', '/v1/keys');
    const listed = list.body.data.find((key: Json) => key.id === id);
    expect(listed).toMatchObject({ limit_reset: 'daily', limit_remaining: 5 });
    // Keys without a reset: null window, lifetime remaining (null without a cap).
    const plain = list.body.data.find((key: Json) => key.id === tenant.inferenceKeyId);
    expect(plain).toMatchObject({
      limit_reset: null,
      limit_remaining: null,
      limit_resets_at: null,
      usage_daily: 0,
    });

    const self = await api('GET', '/v1/key', undefined, created.body.data.key);
    expect(self.body.data).toMatchObject({
      limit_reset: 'daily',
      limit_remaining: 5,
      usage_daily: 0,
      limit_resets_at: '2031-03-07T00:00:00.000Z',
    });
  });

  it('PATCH /v1/keys/{id} sets, changes and clears limit_reset; limit_resets_at follows it, cap or none', async () => {
    const created = await api('POST', '/v1/keys', { name: 'patched' });
    const path = `/v1/keys/${created.body.data.id}`;
    const weekly = await api('PATCH', path, { limit_reset: 'weekly' });
    expect(weekly.status).toBe(200);
    // 2031-03-06 is a Thursday: the week ends on Monday 2031-03-10.
    expect(weekly.body.data).toMatchObject({
      limit_reset: 'weekly',
      limit_remaining: null,
      limit_resets_at: '2031-03-10T00:00:00.000Z',
    });
    const monthly = await api('PATCH', path, { limit_reset: 'monthly', spend_limit_usd: 2 });
    expect(monthly.body.data).toMatchObject({
      limit_reset: 'monthly',
      limit_remaining: 2,
      limit_resets_at: '2031-04-01T00:00:00.000Z',
    });
    const cleared = await api('PATCH', path, { limit_reset: null });
    expect(cleared.body.data).toMatchObject({ limit_reset: null, limit_resets_at: null, spend_limit_usd: 2 });
  });

  it('a bad limit_reset is a 400 invalid_request naming the field and the values it takes', async () => {
    for (const bad of ['hourly', 'Daily', 1, true]) {
      const created = await api('POST', '/v1/keys', { name: 'bad', limit_reset: bad });
      expect(created.status).toBe(400);
      expect(created.body.error.code).toBe('invalid_request');
      expect(created.body.error.message).toContain('limit_reset');
      expect(created.body.error.message).toContain('"daily", "weekly", "monthly" or null');
    }
    const patched = await api('PATCH', `/v1/keys/${tenant.inferenceKeyId}`, { limit_reset: 'yearly' });
    expect(patched.status).toBe(400);
    expect(patched.body.error.code).toBe('invalid_request');
  });

  it('100 concurrent requests against a daily cap covering 10: exactly 10 admitted; the 402 names the window and its reset', async () => {
    const worst = await worstCaseMicros();
    const { key, secret } = await createApiKey(gw.storage, {
      accountId: tenant.account.id,
      name: 'daily ten',
      scope: 'inference',
      env: 'live',
      spendLimitMicros: 10 * worst,
      limitReset: 'daily',
    });
    const callsBefore = gw.upstream('main').calls.length;
    let open!: () => void;
    gw.upstream('main').holdUntil(
      new Promise<void>((resolve) => {
        open = resolve;
      }),
    );
    let refused = 0;
    const responses = Array.from({ length: 100 }, () =>
      chat(secret).then(async (response) => {
        const body = (await response.json()) as Json;
        // The admitted ten wait upstream until the ninety others were refused: no settle can free
        // room for a late reserve.
        if (response.status === 402 && ++refused === 90) open();
        return { status: response.status, body };
      }),
    );
    const settled = await Promise.all(responses);
    gw.upstream('main').holdUntil(null);
    expect(settled.filter((r) => r.status === 200)).toHaveLength(10);
    expect(settled.filter((r) => r.status === 402)).toHaveLength(90);
    expect(gw.upstream('main').calls.length - callsBefore).toBe(10);
    const refusal = settled.find((r) => r.status === 402)!.body.error;
    expect(refusal.code).toBe('key_limit_exceeded');
    expect(refusal.message).toContain('daily');
    expect(refusal.message).toContain('2031-03-07T00:00:00.000Z');

    const view = await api('GET', `/v1/keys/${key.id}`);
    expect(view.body.data.usage_daily).toBeGreaterThan(0);
    expect(view.body.data.usage_daily).toBe(view.body.data.usage_weekly);

    // The day turns at 00:00 UTC: the whole cap again, yesterday's spend in the week and month only.
    gw.clock.advance(Date.parse('2031-03-07T00:00:00Z') - gw.clock.now());
    const next = await chat(secret);
    expect(next.status).toBe(200);
    const after = await api('GET', `/v1/keys/${key.id}`);
    expect(after.body.data.usage_weekly).toBeGreaterThan(after.body.data.usage_daily);
    expect(after.body.data.limit_resets_at).toBe('2031-03-08T00:00:00.000Z');
  });
});
