import { apiRoutes, mintApiKey } from '@tollgate/core';
import { expect, it } from 'vitest';
import { type ApiResponse, call, expectAnthropicError, expectError } from './helpers/http.js';
import { describeOnEachStorage } from './helpers/test-gateway.js';

/** Routes that need a key, with a concrete path (path params filled in). */
const keyProtected = [
  { method: 'GET', path: '/v1/key' },
  { method: 'GET', path: '/v1/keys' },
  { method: 'POST', path: '/v1/keys' },
  { method: 'GET', path: '/v1/models/acme/fast/endpoints' },
];

/** Inference-scope routes of the route table (none yet: POST /v1/chat/completions is still to come). */
const inferenceRoutes = apiRoutes.filter((route) => route.access === 'inference');

describeOnEachStorage('authentication over HTTP', (gw) => {
  const get = (path: string, authorization?: string) =>
    call(gw().url, path, authorization === undefined ? {} : { headers: { Authorization: authorization } });

  it.each(keyProtected)(
    'no Authorization header on $method $path → 401 unauthenticated',
    async ({ method, path }) => {
      const response = await call(gw().url, path, {
        method,
        ...(method === 'POST' && { json: { name: 'x' } }),
      });
      expectError(response, 401, 'unauthenticated');
    },
  );

  it('a Basic Authorization header → 401 unauthenticated', async () => {
    const { inferenceKey } = await gw().newTenant();
    const basic = `Basic ${Buffer.from(`user:${inferenceKey}`).toString('base64')}`;
    expectError(await get('/v1/key', basic), 401, 'unauthenticated');
  });

  it('a bearer scheme with no token → 401 unauthenticated', async () => {
    expectError(await get('/v1/key', 'Bearer'), 401, 'unauthenticated');
  });

  it('a token without a gateway prefix (sk-…) → 401 invalid_api_key', async () => {
    expectError(await get('/v1/key', 'Bearer sk-abc'), 401, 'invalid_api_key');
  });

  it('a bare key prefix (gw_live_ with no secret) → 401 invalid_api_key', async () => {
    expectError(await get('/v1/key', 'Bearer gw_live_'), 401, 'invalid_api_key');
  });

  it('the auth scheme is case-insensitive: "bearer <key>" authenticates', async () => {
    const { inferenceKey } = await gw().newTenant();
    const response = await get('/v1/key', `bearer ${inferenceKey}`);
    expect(response.status).toBe(200);
  });

  it('a well-formed but unknown gw_live_ key → 401 invalid_api_key', async () => {
    const unknown = await mintApiKey('live');
    expectError(await get('/v1/key', `Bearer ${unknown.key}`), 401, 'invalid_api_key');
  });

  it('a well-formed but unknown gw_test_ key → 401 invalid_api_key', async () => {
    const unknown = await mintApiKey('test');
    expectError(await get('/v1/key', `Bearer ${unknown.key}`), 401, 'invalid_api_key');
  });

  it('a gw_test_ key works like a live one (GET /v1/key and GET /v1/keys)', async () => {
    const tenant = await gw().newTenant({ env: 'test' });
    expect(tenant.inferenceKey).toMatch(/^gw_test_/);
    const info = await call(gw().url, '/v1/key', { key: tenant.inferenceKey });
    expect(info.status).toBe(200);
    expect(info.body.data.id).toBe(tenant.inferenceKeyId);
    const list = await call(gw().url, '/v1/keys', { key: tenant.provisioningKey });
    expect(list.status).toBe(200);
  });

  it('a key revoked through DELETE /v1/keys/{id} → 401 key_revoked', async () => {
    const tenant = await gw().newTenant();
    expect((await call(gw().url, '/v1/key', { key: tenant.inferenceKey })).status).toBe(200);
    const revoked = await call(gw().url, `/v1/keys/${tenant.inferenceKeyId}`, {
      method: 'DELETE',
      key: tenant.provisioningKey,
    });
    expect(revoked.status).toBe(200);
    expectError(await call(gw().url, '/v1/key', { key: tenant.inferenceKey }), 401, 'key_revoked');
    expectError(
      await call(gw().url, '/v1/models/acme/fast/endpoints', { key: tenant.inferenceKey }),
      401,
      'key_revoked',
    );
  });

  it('a suspended account → 403 account_suspended for both of its keys, on every endpoint', async () => {
    const tenant = await gw().newTenant();
    const other = await gw().newTenant();
    await gw().storage.setAccountSuspended(tenant.account.id, true);
    const attempts: ApiResponse[] = await Promise.all([
      call(gw().url, '/v1/key', { key: tenant.inferenceKey }),
      call(gw().url, '/v1/key', { key: tenant.provisioningKey }),
      call(gw().url, '/v1/keys', { key: tenant.provisioningKey }),
      call(gw().url, '/v1/keys', { key: tenant.provisioningKey, json: { name: 'new' } }),
      call(gw().url, '/v1/models/acme/fast/endpoints', { key: tenant.inferenceKey }),
      // Suspension is decided before scope: an inference key on /v1/keys also reads as suspended.
      call(gw().url, '/v1/keys', { key: tenant.inferenceKey }),
    ]);
    for (const response of attempts) expectError(response, 403, 'account_suspended');
    // Another account is untouched.
    expect((await call(gw().url, '/v1/key', { key: other.inferenceKey })).status).toBe(200);
    // And unsuspending restores access.
    await gw().storage.setAccountSuspended(tenant.account.id, false);
    expect((await call(gw().url, '/v1/key', { key: tenant.inferenceKey })).status).toBe(200);
  });

  it.each([
    { method: 'GET', path: '/v1/keys' },
    { method: 'POST', path: '/v1/keys' },
    { method: 'GET', path: '/v1/keys/{own}' },
    { method: 'PATCH', path: '/v1/keys/{own}' },
    { method: 'DELETE', path: '/v1/keys/{own}' },
  ])(
    'an inference key on $method $path → 403 wrong_key_scope (permission_error)',
    async ({ method, path }) => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, path.replace('{own}', tenant.inferenceKeyId), {
        method,
        key: tenant.inferenceKey,
        ...((method === 'POST' || method === 'PATCH') && { json: { name: 'x' } }),
      });
      expectError(response, 403, 'wrong_key_scope');
      expect(response.body.error.type).toBe('permission_error');
      // Nothing happened: no key was minted, renamed or revoked.
      const keys = await gw().storage.listApiKeys(tenant.account.id);
      expect(keys).toHaveLength(2);
      expect(keys.every((key) => !key.disabled && key.name !== 'x')).toBe(true);
    },
  );

  it('an inference key minted through the API cannot see or create keys either', async () => {
    const tenant = await gw().newTenant();
    const minted = await call(gw().url, '/v1/keys', {
      key: tenant.provisioningKey,
      json: { name: 'customer' },
    });
    expect(minted.status).toBe(201);
    expectError(await call(gw().url, '/v1/keys', { key: minted.body.data.key }), 403, 'wrong_key_scope');
    expectError(
      await call(gw().url, '/v1/keys', { key: minted.body.data.key, json: { name: 'escalate' } }),
      403,
      'wrong_key_scope',
    );
  });

  if (inferenceRoutes.length === 0) {
    it.skip('a provisioning key on an inference endpoint → 403 wrong_key_scope (skipped: no inference-scope route exists yet; this test picks up POST /v1/chat/completions by itself once it is in apiRoutes)', () => {});
  } else {
    it.each(inferenceRoutes.map((route) => ({ method: route.method, path: route.path })))(
      'a provisioning key on the inference endpoint $method $path → 403 wrong_key_scope',
      async ({ method, path }) => {
        const tenant = await gw().newTenant();
        const response = await call(gw().url, path.replace(/\{\w+\}/g, 'x'), {
          method,
          key: tenant.provisioningKey,
          ...(method !== 'GET' && method !== 'DELETE' && { json: { model: 'acme/fast', messages: [] } }),
        });
        // The Messages wire answers in Anthropic's body (product.md), the spec's code first in its message.
        if (path.startsWith('/v1/messages'))
          expectAnthropicError(response, 403, 'wrong_key_scope', 'permission_error');
        else expectError(response, 403, 'wrong_key_scope');
      },
    );
  }
});
