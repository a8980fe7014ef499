import { createBodySealer, serverSecretBytes } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import {
  ACCOUNT_API_SECRET,
  type AccountApiGateway,
  describeAccountApi,
} from './helpers/account-api-gateway.js';
import { expectError } from './helpers/http.js';

const BYOK_ID = /^byok_[0-9a-z]{20}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const VIEW_FIELDS = ['allow_fallback', 'created_at', 'id', 'label', 'provider'];

/** A provider key unlike anything else a response or the database could hold. */
const providerKey = () => `sk-proj-BYOKCANARY${crypto.randomUUID().replaceAll('-', '')}`;

const sealer = createBodySealer(serverSecretBytes(ACCOUNT_API_SECRET), 'byok');

function add(api: AccountApiGateway, key: string, body: unknown) {
  return api.call('/v1/byok', { key, json: body });
}

describeAccountApi('BYOK API', (api) => {
  describe('POST /v1/byok', () => {
    it('201 with the view {id, provider, label, allow_fallback, created_at}, never the key', async () => {
      const tenant = await api().newTenant();
      const apiKey = providerKey();
      const response = await add(api(), tenant.provisioningKey, {
        provider: 'openai',
        api_key: apiKey,
        label: 'prod',
        allow_fallback: true,
      });
      expect(response.status, response.text).toBe(201);
      expect(Object.keys(response.body).sort()).toEqual(VIEW_FIELDS);
      expect(response.body).toEqual({
        id: expect.stringMatching(BYOK_ID),
        provider: 'openai',
        label: 'prod',
        allow_fallback: true,
        created_at: expect.stringMatching(ISO),
      });
      expect(Math.abs(Date.parse(response.body.created_at) - Date.now())).toBeLessThan(60_000);
      expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
      expect(response.text).not.toContain('BYOKCANARY');
    });

    it('label and allow_fallback default to null and false', async () => {
      const tenant = await api().newTenant();
      const response = await add(api(), tenant.provisioningKey, {
        provider: 'anthropic',
        api_key: providerKey(),
      });
      expect(response.status, response.text).toBe(201);
      expect(response.body).toMatchObject({ provider: 'anthropic', label: null, allow_fallback: false });
    });

    it('stores the key sealed under the server secret: the database never holds it in clear', async () => {
      const tenant = await api().newTenant();
      const apiKey = providerKey();
      const { body } = await add(api(), tenant.provisioningKey, { provider: 'openai', api_key: apiKey });
      const [stored] = await api().storage.listByokKeys(tenant.account.id);
      expect(stored?.id).toBe(body.id);
      expect(stored?.sealedKey).not.toContain(apiKey);
      expect(await sealer.open(tenant.account.id, body.id, stored!.sealedKey)).toBe(apiKey);
      // Sealed under the key's own id and account: neither opens it as another.
      await expect(sealer.open('acct_other', body.id, stored!.sealedKey)).rejects.toThrow();
      const raw = await api().opened.dump();
      expect(raw.length).toBeGreaterThan(0);
      expect(raw.includes(apiKey)).toBe(false);
      expect(raw.includes('BYOKCANARY')).toBe(false);
      // The dump does read the table: the key's id is there.
      expect(raw.includes(body.id)).toBe(true);
    });

    it('trims whitespace around the key (a pasted newline) before sealing it', async () => {
      const tenant = await api().newTenant();
      const apiKey = providerKey();
      const { body, status } = await add(api(), tenant.provisioningKey, {
        provider: 'openai',
        api_key: `  ${apiKey}\n`,
      });
      expect(status).toBe(201);
      const [stored] = await api().storage.listByokKeys(tenant.account.id);
      expect(await sealer.open(tenant.account.id, body.id, stored!.sealedKey)).toBe(apiKey);
    });

    it('accepts a key of exactly 1000 characters', async () => {
      const tenant = await api().newTenant();
      const response = await add(api(), tenant.provisioningKey, {
        provider: 'openai',
        api_key: 'k'.repeat(1000),
      });
      expect(response.status, response.text).toBe(201);
    });

    it.each([
      { label: 'a provider not in the config', body: { provider: 'mistral' }, field: 'body.provider' },
      { label: 'the keyless demo provider', body: { provider: 'demo' }, field: 'body.provider' },
      { label: 'a missing provider', body: { provider: undefined }, field: 'body.provider' },
      { label: 'a provider that is not a string', body: { provider: 7 }, field: 'body.provider' },
      { label: 'a missing api_key', body: { api_key: undefined }, field: 'body.api_key' },
      { label: 'an empty api_key', body: { api_key: '' }, field: 'body.api_key' },
      { label: 'a blank api_key', body: { api_key: '   ' }, field: 'body.api_key' },
      {
        label: 'an api_key of 1001 characters',
        body: { api_key: `BYOKCANARY${'k'.repeat(991)}` },
        field: 'body.api_key',
      },
      { label: 'a NUL in the api_key', body: { api_key: 'sk-BYOKCANARY\u0000x' }, field: 'body.api_key' },
      { label: 'a newline inside the api_key', body: { api_key: 'sk-BYOKCANARY\nx' }, field: 'body.api_key' },
      { label: 'an api_key that is not a string', body: { api_key: 12345 }, field: 'body.api_key' },
      { label: 'a label of 101 characters', body: { label: 'l'.repeat(101) }, field: 'body.label' },
      { label: 'an empty label', body: { label: '' }, field: 'body.label' },
      { label: 'a NUL in the label', body: { label: 'a\u0000b' }, field: 'body.label' },
      {
        label: 'allow_fallback not a boolean',
        body: { allow_fallback: 'yes' },
        field: 'body.allow_fallback',
      },
      { label: 'an unknown field', body: { sealed: true }, field: 'sealed' },
    ])('$label → 400 invalid_request naming $field, never quoting the key', async ({ body, field }) => {
      const tenant = await api().newTenant();
      const response = await add(api(), tenant.provisioningKey, {
        provider: 'openai',
        api_key: 'sk-BYOKCANARY-valid',
        ...body,
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain(field);
      expect(response.text).not.toContain('BYOKCANARY');
      expect(await api().storage.listByokKeys(tenant.account.id)).toEqual([]);
    });

    it('the message for an unknown provider names the providers that can take a key', async () => {
      const tenant = await api().newTenant();
      const response = await add(api(), tenant.provisioningKey, {
        provider: 'mistral',
        api_key: providerKey(),
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(/no provider "mistral".*openai, anthropic/);
      expect(response.body.error.message).not.toContain('demo,');
    });
  });

  describe('GET /v1/byok', () => {
    it("lists the account's keys oldest first, as views only", async () => {
      const tenant = await api().newTenant();
      const keys = [providerKey(), providerKey()];
      const first = await add(api(), tenant.provisioningKey, { provider: 'openai', api_key: keys[0] });
      const second = await add(api(), tenant.provisioningKey, {
        provider: 'anthropic',
        api_key: keys[1],
        label: 'claude',
      });
      const response = await api().call('/v1/byok', { key: tenant.provisioningKey });
      expect(response.status).toBe(200);
      expect(Object.keys(response.body)).toEqual(['data']);
      expect(response.body.data).toEqual([first.body, second.body]);
      for (const view of response.body.data) expect(Object.keys(view).sort()).toEqual(VIEW_FIELDS);
      expect(response.text).not.toContain('BYOKCANARY');
    });

    it('an account without keys gets an empty list', async () => {
      const tenant = await api().newTenant();
      const response = await api().call('/v1/byok', { key: tenant.provisioningKey });
      expect(response).toMatchObject({ status: 200, body: { data: [] } });
    });
  });

  describe('DELETE /v1/byok/{id}', () => {
    it('200 with the deleted view and deleted: true; the key is gone, a second delete is 404', async () => {
      const tenant = await api().newTenant();
      const created = await add(api(), tenant.provisioningKey, {
        provider: 'openai',
        api_key: providerKey(),
      });
      const kept = await add(api(), tenant.provisioningKey, {
        provider: 'anthropic',
        api_key: providerKey(),
      });
      const path = `/v1/byok/${created.body.id}`;
      const deleted = await api().call(path, { method: 'DELETE', key: tenant.provisioningKey });
      expect(deleted.status, deleted.text).toBe(200);
      expect(deleted.body).toEqual({ ...created.body, deleted: true });
      expect(deleted.text).not.toContain('BYOKCANARY');
      const list = await api().call('/v1/byok', { key: tenant.provisioningKey });
      expect(list.body.data).toEqual([kept.body]);
      expectError(
        await api().call(path, { method: 'DELETE', key: tenant.provisioningKey }),
        404,
        'not_found',
      );
    });

    it.each(['byok_unknown00000000000000', 'not-an-id', 'key_abc'])(
      'an unknown id (%s) → 404 not_found',
      async (id) => {
        const tenant = await api().newTenant();
        const response = await api().call(`/v1/byok/${id}`, {
          method: 'DELETE',
          key: tenant.provisioningKey,
        });
        expectError(response, 404, 'not_found');
      },
    );
  });

  describe('isolation between accounts', () => {
    it("account B neither lists nor deletes account A's keys", async () => {
      const a = await api().newTenant();
      const b = await api().newTenant();
      const created = await add(api(), a.provisioningKey, { provider: 'openai', api_key: providerKey() });
      expect((await api().call('/v1/byok', { key: b.provisioningKey })).body).toEqual({ data: [] });
      const response = await api().call(`/v1/byok/${created.body.id}`, {
        method: 'DELETE',
        key: b.provisioningKey,
      });
      expectError(response, 404, 'not_found');
      expect((await api().call('/v1/byok', { key: a.provisioningKey })).body.data).toEqual([created.body]);
    });
  });

  describe('access', () => {
    it.each([
      { method: 'POST', path: '/v1/byok', json: { provider: 'openai', api_key: 'sk-x' } },
      { method: 'GET', path: '/v1/byok' },
      { method: 'DELETE', path: '/v1/byok/byok_x' },
    ])('an inference key → 403 wrong_key_scope on $method $path', async ({ method, path, json }) => {
      const tenant = await api().newTenant();
      const response = await api().call(path, { method, key: tenant.inferenceKey, json });
      expectError(response, 403, 'wrong_key_scope');
      expect(await api().storage.listByokKeys(tenant.account.id)).toEqual([]);
    });

    it('no key → 401 unauthenticated', async () => {
      expectError(await api().call('/v1/byok'), 401, 'unauthenticated');
    });
  });
});
