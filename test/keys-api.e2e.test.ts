import { createApiKey, hashApiKey } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { call, expectError } from './helpers/http.js';
import {
  describeInProcessOnEachStorage,
  TEST_DEFAULT_RPM,
  type TestGateway,
} from './helpers/test-gateway.js';

const KEY_ID = /^key_[0-9a-z]+$/;

/** Mints a key through POST /v1/keys and returns the response. */
async function mint(gw: TestGateway, provisioningKey: string, body: Record<string, unknown>) {
  return call(gw.url, '/v1/keys', { key: provisioningKey, json: body });
}

describeInProcessOnEachStorage('keys API', (gw) => {
  describe('POST /v1/keys', () => {
    it('a live provisioning key mints a gw_live_ inference key: 201 with key, prefix, scope', async () => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, { name: 'customer 1' });
      expect(response.status).toBe(201);
      const { data } = response.body;
      expect(data.key).toMatch(/^gw_live_[A-Za-z0-9_-]{32}$/);
      expect(data.id).toMatch(KEY_ID);
      expect(data.prefix.length).toBeGreaterThan('gw_live_'.length);
      expect(data.prefix.length).toBeLessThan(data.key.length);
      expect(data.key.startsWith(data.prefix)).toBe(true);
      expect(data).toMatchObject({
        name: 'customer 1',
        scope: 'inference',
        env: 'live',
        disabled: false,
        project_id: null,
        spend_limit_usd: null,
        rate_limit_rpm: null,
      });
      expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    });

    it('a test provisioning key mints gw_test_ keys', async () => {
      const tenant = await gw().newTenant({ env: 'test' });
      const response = await mint(gw(), tenant.provisioningKey, { name: 'sandbox' });
      expect(response.status).toBe(201);
      expect(response.body.data.key).toMatch(/^gw_test_[A-Za-z0-9_-]{32}$/);
      expect(response.body.data.env).toBe('test');
    });

    it('the minted key authenticates GET /v1/key as itself, an inference key of the same account', async () => {
      const tenant = await gw().newTenant();
      const { body } = await mint(gw(), tenant.provisioningKey, { name: 'mine' });
      const info = await call(gw().url, '/v1/key', { key: body.data.key });
      expect(info.status).toBe(200);
      expect(info.body.data).toMatchObject({
        id: body.data.id,
        name: 'mine',
        scope: 'inference',
        account_id: tenant.account.id,
      });
    });

    it('every mint is a different key', async () => {
      const tenant = await gw().newTenant();
      const minted = await Promise.all(
        [1, 2, 3].map((n) => mint(gw(), tenant.provisioningKey, { name: `k${n}` })),
      );
      const keys = minted.map((r) => r.body.data.key);
      expect(new Set(keys).size).toBe(3);
      expect(new Set(minted.map((r) => r.body.data.id)).size).toBe(3);
    });

    it.each([
      { label: 'missing', body: {} },
      { label: 'empty', body: { name: '' } },
      { label: 'blank', body: { name: '   ' } },
      { label: '101 characters', body: { name: 'n'.repeat(101) } },
      { label: 'not a string', body: { name: 42 } },
    ])('name $label → 400 invalid_request naming `name`', async ({ body }) => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, body);
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(/\bname\b/);
      expect(await gw().storage.listApiKeys(tenant.account.id)).toHaveLength(2);
    });

    it('a name of exactly 100 characters is accepted', async () => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, { name: 'n'.repeat(100) });
      expect(response.status).toBe(201);
      expect(response.body.data.name).toBe('n'.repeat(100));
    });

    it.each([0, -1, 1.0000001, '5'])(
      'spend_limit_usd %s → 400 invalid_request naming spend_limit_usd',
      async (spendLimit) => {
        const tenant = await gw().newTenant();
        const response = await mint(gw(), tenant.provisioningKey, { name: 'x', spend_limit_usd: spendLimit });
        expectError(response, 400, 'invalid_request');
        expect(response.body.error.message).toContain('spend_limit_usd');
      },
    );

    it('spend_limit_usd 0.5 is accepted and shown as 0.5 USD / 500000 micros', async () => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, { name: 'x', spend_limit_usd: 0.5 });
      expect(response.status).toBe(201);
      expect(response.body.data.spend_limit_usd).toBe(0.5);
      expect(response.body.data.spend_limit_micros).toBe(500_000);
      const stored = await gw().storage.getApiKey(tenant.account.id, response.body.data.id);
      expect(stored?.spendLimitMicros).toBe(500_000);
    });

    it.each([0, 1.5, -3, '10'])(
      'rate_limit_rpm %s → 400 invalid_request naming rate_limit_rpm',
      async (rpm) => {
        const tenant = await gw().newTenant();
        const response = await mint(gw(), tenant.provisioningKey, { name: 'x', rate_limit_rpm: rpm });
        expectError(response, 400, 'invalid_request');
        expect(response.body.error.message).toContain('rate_limit_rpm');
      },
    );

    it('rate_limit_rpm 1 is accepted', async () => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, { name: 'x', rate_limit_rpm: 1 });
      expect(response.status).toBe(201);
      expect(response.body.data.rate_limit_rpm).toBe(1);
    });

    it.each([
      { field: 'rate_limit_rpm', value: 3_000_000_000 },
      { field: 'spend_limit_usd', value: 9_000_000_000 },
    ])(
      'a very large $field ($value) is either stored exactly or refused 400, never a 500',
      async ({ field, value }) => {
        const tenant = await gw().newTenant();
        const created = await mint(gw(), tenant.provisioningKey, { name: 'big', [field]: value });
        expect([201, 400], created.text).toContain(created.status);
        if (created.status === 400) expectError(created, 400, 'invalid_request');
        else expect(created.body.data[field]).toBe(value);

        const patched = await call(gw().url, `/v1/keys/${tenant.inferenceKeyId}`, {
          method: 'PATCH',
          key: tenant.provisioningKey,
          json: { [field]: value },
        });
        expect([200, 400], patched.text).toContain(patched.status);
        if (patched.status === 400) expectError(patched, 400, 'invalid_request');
        else expect(patched.body.data[field]).toBe(value);
      },
    );

    it('a NUL character in name or project_id → 400 invalid_request, never a 500', async () => {
      const tenant = await gw().newTenant();
      for (const body of [{ name: 'a\u0000b' }, { name: 'ok', project_id: 'proj_\u0000' }]) {
        const response = await mint(gw(), tenant.provisioningKey, body);
        expect(response.status, response.text).not.toBe(500);
        // Storing the name as given would also do; what matters is no internal error.
        if (response.status !== 201) expectError(response, 400, 'invalid_request');
      }
    });

    it("scope 'provisioning' → 400 invalid_request and no key is minted", async () => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, { name: 'x', scope: 'provisioning' });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain('scope');
      const keys = await gw().storage.listApiKeys(tenant.account.id);
      expect(keys.filter((key) => key.scope === 'provisioning')).toHaveLength(1);
      expect(keys).toHaveLength(2);
    });

    it("scope 'inference' given explicitly is accepted", async () => {
      const tenant = await gw().newTenant();
      const response = await mint(gw(), tenant.provisioningKey, { name: 'x', scope: 'inference' });
      expect(response.status).toBe(201);
      expect(response.body.data.scope).toBe('inference');
    });

    it("project_id of another account's project, or an unknown one → 400 invalid_request naming project_id", async () => {
      const tenant = await gw().newTenant();
      const other = await gw().newTenant();
      const foreign = await gw().storage.createProject({ accountId: other.account.id, name: 'theirs' });
      for (const projectId of [foreign.id, 'proj_doesnotexist']) {
        const response = await mint(gw(), tenant.provisioningKey, { name: 'x', project_id: projectId });
        expectError(response, 400, 'invalid_request');
        expect(response.body.error.message).toContain('project_id');
      }
      expect(await gw().storage.listApiKeys(tenant.account.id)).toHaveLength(2);
      expect(await gw().storage.listApiKeys(other.account.id)).toHaveLength(2);
    });

    it('project_id of an own project is accepted and shown', async () => {
      const tenant = await gw().newTenant();
      const project = await gw().storage.createProject({ accountId: tenant.account.id, name: 'mine' });
      const response = await mint(gw(), tenant.provisioningKey, { name: 'x', project_id: project.id });
      expect(response.status).toBe(201);
      expect(response.body.data.project_id).toBe(project.id);
    });
  });

  describe('GET /v1/keys', () => {
    it('lists the account keys without any secret or hash, disabled keys included', async () => {
      const tenant = await gw().newTenant();
      const other = await gw().newTenant();
      const a = await mint(gw(), tenant.provisioningKey, { name: 'a' });
      const b = await mint(gw(), tenant.provisioningKey, { name: 'b' });
      await call(gw().url, `/v1/keys/${b.body.data.id}`, { method: 'DELETE', key: tenant.provisioningKey });

      const response = await call(gw().url, '/v1/keys', { key: tenant.provisioningKey });
      expect(response.status).toBe(200);
      const rows: Record<string, unknown>[] = response.body.data;
      expect(rows.map((row) => row.id).sort()).toEqual(
        [tenant.provisioningKeyId, tenant.inferenceKeyId, a.body.data.id, b.body.data.id].sort(),
      );
      expect(rows.find((row) => row.id === b.body.data.id)?.disabled).toBe(true);
      expect(rows.find((row) => row.id === a.body.data.id)?.disabled).toBe(false);
      for (const row of rows) {
        expect(row).not.toHaveProperty('key');
        expect(Object.keys(row).some((name) => /hash|secret/i.test(name))).toBe(false);
      }
      const secrets = [tenant.provisioningKey, tenant.inferenceKey, a.body.data.key, b.body.data.key];
      const hashes = await Promise.all(secrets.map(hashApiKey));
      for (const secret of [...secrets, ...hashes]) expect(response.text).not.toContain(secret);
      // Nothing of the other account.
      expect(response.text).not.toContain(other.inferenceKeyId);
    });
  });

  describe('PATCH /v1/keys/{id}', () => {
    it('changes the name and the limits; null clears a limit', async () => {
      const tenant = await gw().newTenant();
      const { body } = await mint(gw(), tenant.provisioningKey, {
        name: 'before',
        spend_limit_usd: 2,
        rate_limit_rpm: 10,
      });
      const path = `/v1/keys/${body.data.id}`;

      const renamed = await call(gw().url, path, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { name: 'after', spend_limit_usd: 0.25, rate_limit_rpm: 5 },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({
        id: body.data.id,
        name: 'after',
        spend_limit_usd: 0.25,
        spend_limit_micros: 250_000,
        rate_limit_rpm: 5,
        disabled: false,
      });

      const cleared = await call(gw().url, path, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { spend_limit_usd: null, rate_limit_rpm: null },
      });
      expect(cleared.status).toBe(200);
      expect(cleared.body.data).toMatchObject({
        name: 'after',
        spend_limit_usd: null,
        spend_limit_micros: null,
        rate_limit_rpm: null,
      });
      const info = await call(gw().url, '/v1/key', { key: body.data.key });
      expect(info.body.data.key_spend.limit_micros).toBeNull();
      expect(info.body.data.rate_limit.source).not.toBe('key');
    });

    it.each([
      { label: 'an empty patch', json: {} },
      { label: 'a 101-character name', json: { name: 'n'.repeat(101) } },
      { label: 'spend_limit_usd 0', json: { spend_limit_usd: 0 } },
      { label: 'rate_limit_rpm 0', json: { rate_limit_rpm: 0 } },
      { label: 'disabled as a string', json: { disabled: 'yes' } },
    ])('$label → 400 invalid_request, the key unchanged', async ({ json }) => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, `/v1/keys/${tenant.inferenceKeyId}`, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json,
      });
      expectError(response, 400, 'invalid_request');
      const key = await gw().storage.getApiKey(tenant.account.id, tenant.inferenceKeyId);
      expect(key).toMatchObject({
        name: 'inference',
        spendLimitMicros: null,
        rateLimitRpm: null,
        disabled: false,
      });
    });

    it('disabled: true makes the key fail 401 key_revoked; disabled: false makes it work again', async () => {
      const tenant = await gw().newTenant();
      const path = `/v1/keys/${tenant.inferenceKeyId}`;
      const off = await call(gw().url, path, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { disabled: true },
      });
      expect(off.status).toBe(200);
      expect(off.body.data.disabled).toBe(true);
      expectError(await call(gw().url, '/v1/key', { key: tenant.inferenceKey }), 401, 'key_revoked');

      const on = await call(gw().url, path, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { disabled: false },
      });
      expect(on.status).toBe(200);
      expect(on.body.data.disabled).toBe(false);
      expect((await call(gw().url, '/v1/key', { key: tenant.inferenceKey })).status).toBe(200);
    });
  });

  describe('DELETE /v1/keys/{id}', () => {
    it('revokes: the row stays listed with disabled: true and later use fails 401 key_revoked', async () => {
      const tenant = await gw().newTenant();
      const { body } = await mint(gw(), tenant.provisioningKey, { name: 'to revoke' });
      expect((await call(gw().url, '/v1/key', { key: body.data.key })).status).toBe(200);

      const revoked = await call(gw().url, `/v1/keys/${body.data.id}`, {
        method: 'DELETE',
        key: tenant.provisioningKey,
      });
      expect(revoked.status).toBe(200);
      expect(revoked.body.data).toMatchObject({ id: body.data.id, disabled: true });

      const single = await call(gw().url, `/v1/keys/${body.data.id}`, { key: tenant.provisioningKey });
      expect(single.status).toBe(200);
      expect(single.body.data.disabled).toBe(true);
      const list = await call(gw().url, '/v1/keys', { key: tenant.provisioningKey });
      expect(list.body.data.find((row: { id: string }) => row.id === body.data.id)).toMatchObject({
        disabled: true,
      });
      expectError(await call(gw().url, '/v1/key', { key: body.data.key }), 401, 'key_revoked');
    });

    it('revokes for good: revoked: true, and PATCH disabled: false → 400 "a revoked key cannot be enabled"', async () => {
      const tenant = await gw().newTenant();
      const path = `/v1/keys/${tenant.inferenceKeyId}`;
      const revoked = await call(gw().url, path, { method: 'DELETE', key: tenant.provisioningKey });
      expect(revoked.body.data).toMatchObject({ revoked: true, disabled: true });

      const enable = await call(gw().url, path, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { disabled: false },
      });
      expectError(enable, 400, 'invalid_request');
      expect(enable.body.error.message).toContain('a revoked key cannot be enabled');
      const renamed = await call(gw().url, path, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { name: 'retired' },
      });
      expect(renamed.status).toBe(200);
      expect(renamed.body.data).toMatchObject({ name: 'retired', revoked: true, disabled: true });
      expectError(await call(gw().url, '/v1/key', { key: tenant.inferenceKey }), 401, 'key_revoked');
      expect(await gw().storage.getApiKey(tenant.account.id, tenant.inferenceKeyId)).toMatchObject({
        revoked: true,
        disabled: true,
      });
    });

    it('a paused key is not revoked: PATCH disabled: true then false resumes it', async () => {
      const tenant = await gw().newTenant();
      const path = `/v1/keys/${tenant.inferenceKeyId}`;
      const patch = (disabled: boolean) =>
        call(gw().url, path, { method: 'PATCH', key: tenant.provisioningKey, json: { disabled } });
      expect((await patch(true)).body.data).toMatchObject({ disabled: true, revoked: false });
      expect((await patch(false)).body.data).toMatchObject({ disabled: false, revoked: false });
      expect((await call(gw().url, '/v1/key', { key: tenant.inferenceKey })).status).toBe(200);
    });

    it('a key cannot revoke or disable itself (400), and keeps working; another provisioning key may', async () => {
      const tenant = await gw().newTenant();
      const self = `/v1/keys/${tenant.provisioningKeyId}`;
      const revoke = await call(gw().url, self, { method: 'DELETE', key: tenant.provisioningKey });
      expectError(revoke, 400, 'invalid_request');
      expect(revoke.body.error.message).toContain('cannot revoke itself');
      const disable = await call(gw().url, self, {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { disabled: true, name: 'renamed' },
      });
      expectError(disable, 400, 'invalid_request');
      expect(disable.body.error.message).toContain('cannot disable itself');
      expect(await gw().storage.getApiKey(tenant.account.id, tenant.provisioningKeyId)).toMatchObject({
        name: 'provisioning',
        disabled: false,
        revoked: false,
      });
      expect((await call(gw().url, '/v1/keys', { key: tenant.provisioningKey })).status).toBe(200);

      const second = await createApiKey(gw().storage, {
        accountId: tenant.account.id,
        name: 'second admin',
        scope: 'provisioning',
        env: 'live',
      });
      const byOther = await call(gw().url, self, { method: 'DELETE', key: second.secret });
      expect(byOther.status).toBe(200);
      expect(byOther.body.data).toMatchObject({ revoked: true });
      expectError(await call(gw().url, '/v1/keys', { key: tenant.provisioningKey }), 401, 'key_revoked');
    });

    it('an unknown key id → 404 not_found', async () => {
      const tenant = await gw().newTenant();
      expectError(
        await call(gw().url, '/v1/keys/key_doesnotexist', { method: 'DELETE', key: tenant.provisioningKey }),
        404,
        'not_found',
      );
    });
  });

  describe('odd key ids in the path', () => {
    it.each(['key_%00', '%F0%9F%98%80', 'k'.repeat(2000)])(
      'GET, PATCH and DELETE /v1/keys/%s → 404 not_found, never a 500',
      async (id) => {
        const tenant = await gw().newTenant();
        for (const init of [{}, { method: 'PATCH', json: { name: 'x' } }, { method: 'DELETE' }]) {
          const response = await call(gw().url, `/v1/keys/${id}`, { key: tenant.provisioningKey, ...init });
          expectError(response, 404, 'not_found');
        }
      },
    );
  });

  describe("another account's key", () => {
    it.each([
      { method: 'GET' },
      { method: 'PATCH', json: { name: 'hijacked', disabled: true, spend_limit_usd: 0.01 } },
      { method: 'DELETE' },
    ])(
      '$method /v1/keys/{their id} → 404 not_found (never 403), their key unchanged',
      async ({ method, json }) => {
        const tenant = await gw().newTenant();
        const victim = await gw().newTenant();
        const before = await gw().storage.getApiKey(victim.account.id, victim.inferenceKeyId);
        const response = await call(gw().url, `/v1/keys/${victim.inferenceKeyId}`, {
          method,
          key: tenant.provisioningKey,
          ...(json && { json }),
        });
        expectError(response, 404, 'not_found');
        expect(await gw().storage.getApiKey(victim.account.id, victim.inferenceKeyId)).toEqual(before);
        expect((await call(gw().url, '/v1/key', { key: victim.inferenceKey })).status).toBe(200);
      },
    );
  });

  describe('GET /v1/key', () => {
    it('answers for an inference key and for a provisioning key', async () => {
      const tenant = await gw().newTenant();
      for (const [key, id, scope] of [
        [tenant.inferenceKey, tenant.inferenceKeyId, 'inference'],
        [tenant.provisioningKey, tenant.provisioningKeyId, 'provisioning'],
      ] as const) {
        const response = await call(gw().url, '/v1/key', { key });
        expect(response.status).toBe(200);
        expect(response.body.data).toMatchObject({ id, scope, account_id: tenant.account.id });
        expect(JSON.stringify(response.body)).not.toContain(key);
      }
    });

    it('returns the balance, key spend vs its cap, month-to-date vs the ceiling, and a key rate limit', async () => {
      const tenant = await gw().newTenant({ creditMicros: 12_345_678, monthlyLimitMicros: 50_000_000 });
      await gw().storage.appendLedgerEntries(tenant.account.id, [
        { amountMicros: -250_000, kind: 'charge', description: 'acme/fast: 10 in, 20 out' },
      ]);
      const { body } = await mint(gw(), tenant.provisioningKey, {
        name: 'capped',
        spend_limit_usd: 1.5,
        rate_limit_rpm: 7,
      });
      const response = await call(gw().url, '/v1/key', { key: body.data.key });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        balance_micros: 12_095_678,
        balance_usd: 12.095678,
        key_spend: {
          spent_micros: 0,
          spent_usd: 0,
          limit_micros: 1_500_000,
          limit_usd: 1.5,
          remaining_micros: 1_500_000,
          remaining_usd: 1.5,
        },
        month_to_date: {
          spent_micros: 250_000,
          spent_usd: 0.25,
          limit_micros: 50_000_000,
          limit_usd: 50,
          remaining_micros: 49_750_000,
          remaining_usd: 49.75,
          month: new Date().toISOString().slice(0, 7),
        },
        rate_limit: { requests_per_minute: 7, source: 'key' },
      });
    });

    it('without caps: null limits; the rate limit comes from the account default, else the deployment default', async () => {
      const withAccountDefault = await gw().newTenant({ defaultRpm: 42 });
      const a = await call(gw().url, '/v1/key', { key: withAccountDefault.inferenceKey });
      expect(a.body.data.rate_limit).toEqual({ requests_per_minute: 42, source: 'account' });
      expect(a.body.data.key_spend).toMatchObject({
        limit_micros: null,
        limit_usd: null,
        remaining_micros: null,
      });
      expect(a.body.data.month_to_date).toMatchObject({
        spent_micros: 0,
        limit_micros: null,
        remaining_micros: null,
      });

      const plain = await gw().newTenant();
      const b = await call(gw().url, '/v1/key', { key: plain.inferenceKey });
      expect(b.body.data.rate_limit).toEqual({ requests_per_minute: TEST_DEFAULT_RPM, source: 'default' });
      expect(b.body.data.balance_micros).toBe(10_000_000);
      expect(b.body.data.balance_usd).toBe(10);
    });
  });

  describe('secrets at rest', () => {
    it('no minted key string occurs anywhere in the database (only its prefix may)', async () => {
      const tenant = await gw().newTenant();
      const minted = await Promise.all(
        ['leak-check-1', 'leak-check-2', 'leak-check-3'].map((name) =>
          mint(gw(), tenant.provisioningKey, { name }),
        ),
      );
      const secrets = [
        tenant.provisioningKey,
        tenant.inferenceKey,
        ...minted.map((r) => r.body.data.key as string),
      ];
      const dump = await gw().opened.dump();
      // The dump does hold what was written (so the check below is not vacuous)…
      for (const response of minted) {
        expect(dump.includes(response.body.data.prefix), 'the prefix should be in the database').toBe(true);
        expect(dump.includes(response.body.data.name), 'the key name should be in the database').toBe(true);
      }
      // …but never a full key, nor the secret part on its own.
      for (const secret of secrets) {
        expect(dump.includes(secret), `full key ${secret.slice(0, 14)}… found in the database`).toBe(false);
        const secretPart = secret.slice('gw_live_'.length);
        expect(dump.includes(secretPart), 'the secret part of a key was found in the database').toBe(false);
      }
    });
  });
});
