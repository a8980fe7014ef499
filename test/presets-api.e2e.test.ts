import { describe, expect, it } from 'vitest';
import { type AccountApiGateway, describeAccountApi } from './helpers/account-api-gateway.js';
import { expectError } from './helpers/http.js';

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const VIEW_FIELDS = ['config', 'created_at', 'description', 'name', 'updated_at'];

const supportConfig = {
  model: 'acme/fast',
  models: ['acme/fast', 'other/model'],
  provider: { order: ['openai'], allow_fallbacks: false },
  transforms: ['middle-out'],
  plugins: [{ id: 'web', max_results: 3 }],
  system: 'You are a support bot.',
  cache: true,
  temperature: 0.2,
  max_tokens: 300,
  top_p: 0.9,
};

function create(api: AccountApiGateway, key: string, body: unknown) {
  return api.call('/v1/presets', { key, json: body });
}

describeAccountApi('presets API', (api) => {
  describe('POST /v1/presets', () => {
    it('201 with the view {name, description, config, created_at, updated_at}', async () => {
      const tenant = await api().newTenant();
      const response = await create(api(), tenant.provisioningKey, {
        name: 'support-bot',
        description: 'Support answers',
        config: supportConfig,
      });
      expect(response.status, response.text).toBe(201);
      expect(Object.keys(response.body).sort()).toEqual(VIEW_FIELDS);
      expect(response.body).toEqual({
        name: 'support-bot',
        description: 'Support answers',
        config: supportConfig,
        created_at: expect.stringMatching(ISO),
        updated_at: expect.stringMatching(ISO),
      });
      expect(response.body.updated_at).toBe(response.body.created_at);
      const stored = await api().storage.getPreset(tenant.account.id, 'support-bot');
      expect(stored?.config).toEqual(supportConfig);
    });

    it('description is optional (null); an empty config is allowed', async () => {
      const tenant = await api().newTenant();
      const response = await create(api(), tenant.provisioningKey, { name: 'empty', config: {} });
      expect(response.status, response.text).toBe(201);
      expect(response.body).toMatchObject({ name: 'empty', description: null, config: {} });
    });

    it('a name of 64 slug characters is accepted', async () => {
      const tenant = await api().newTenant();
      const name = `a-0${'z'.repeat(61)}`;
      const response = await create(api(), tenant.provisioningKey, { name, config: {} });
      expect(response.status, response.text).toBe(201);
      expect(response.body.name).toBe(name);
    });

    it('a name the account already has → 400 invalid_request saying it exists', async () => {
      const tenant = await api().newTenant();
      await create(api(), tenant.provisioningKey, { name: 'dup', config: { temperature: 1 } });
      const response = await create(api(), tenant.provisioningKey, {
        name: 'dup',
        config: { temperature: 0 },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(/body\.name.*already exists/);
      expect((await api().storage.getPreset(tenant.account.id, 'dup'))?.config).toEqual({ temperature: 1 });
    });

    it.each([
      ['missing', undefined],
      ['empty', ''],
      ['upper case', 'Support'],
      ['with a space', 'support bot'],
      ['with an underscore', 'support_bot'],
      ['with a slash', 'a/b'],
      ['65 characters', 'a'.repeat(65)],
      ['not a string', 42],
    ])('a name %s → 400 invalid_request naming body.name', async (_, name) => {
      const tenant = await api().newTenant();
      const response = await create(api(), tenant.provisioningKey, { name, config: {} });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain('body.name');
      expect(await api().storage.listPresets(tenant.account.id)).toEqual([]);
    });

    it.each<[string, unknown, string]>([
      ['missing', undefined, 'body.config'],
      ['an array', [], 'body.config'],
      ['a string', 'fast', 'body.config'],
      ['model not a string', { model: 7 }, 'body.config.model'],
      ['model another preset', { model: '@preset/other' }, 'body.config.model'],
      ['models not an array', { models: 'acme/fast' }, 'body.config.models'],
      ['models holding a number', { models: ['a', 1] }, 'body.config.models.1'],
      ['provider an array', { provider: ['openai'] }, 'body.config.provider'],
      ['provider a string', { provider: 'openai' }, 'body.config.provider'],
      ['transforms not strings', { transforms: [1] }, 'body.config.transforms.0'],
      ['plugins an object', { plugins: { id: 'web' } }, 'body.config.plugins'],
      ['system not a string', { system: ['be brief'] }, 'body.config.system'],
      ['cache not a boolean', { cache: 'yes' }, 'body.config.cache'],
      ['messages', { messages: [{ role: 'user', content: 'hi' }] }, 'body.config.messages'],
      ['input', { input: 'text' }, 'body.config.input'],
      ['stream', { stream: true }, 'body.config.stream'],
      ['preset', { preset: 'other' }, 'body.config.preset'],
      ['metadata', { metadata: { team: 'a' } }, 'body.config.metadata'],
      ['a NUL in a nested string', { provider: { order: ['a\u0000b'] } }, 'body.config.provider.order.0'],
    ])('config %s → 400 invalid_request naming %s', async (_, config, field) => {
      const tenant = await api().newTenant();
      const response = await create(api(), tenant.provisioningKey, { name: 'p', config });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain(field);
      expect(await api().storage.listPresets(tenant.account.id)).toEqual([]);
    });

    it.each([
      ['a description over 1000 characters', { description: 'd'.repeat(1001) }, 'body.description'],
      ['a description with a NUL', { description: 'a\u0000b' }, 'body.description'],
      ['an unknown field', { model: 'acme/fast' }, 'model'],
    ])('%s → 400 invalid_request', async (_, extra, field) => {
      const tenant = await api().newTenant();
      const response = await create(api(), tenant.provisioningKey, { name: 'p', config: {}, ...extra });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain(field);
    });
  });

  describe('GET /v1/presets and /v1/presets/{name}', () => {
    it("lists the account's presets by name; one preset by its name", async () => {
      const tenant = await api().newTenant();
      const b = await create(api(), tenant.provisioningKey, {
        name: 'b-preset',
        config: { model: 'acme/fast' },
      });
      const a = await create(api(), tenant.provisioningKey, { name: 'a-preset', config: { temperature: 0 } });
      const list = await api().call('/v1/presets', { key: tenant.provisioningKey });
      expect(list.status).toBe(200);
      expect(list.body).toEqual({ data: [a.body, b.body] });
      const one = await api().call('/v1/presets/b-preset', { key: tenant.provisioningKey });
      expect(one).toMatchObject({ status: 200, body: b.body });
    });

    it('inference keys may read presets', async () => {
      const tenant = await api().newTenant();
      const created = await create(api(), tenant.provisioningKey, {
        name: 'readable',
        config: { cache: false },
      });
      const list = await api().call('/v1/presets', { key: tenant.inferenceKey });
      expect(list).toMatchObject({ status: 200, body: { data: [created.body] } });
      const one = await api().call('/v1/presets/readable', { key: tenant.inferenceKey });
      expect(one).toMatchObject({ status: 200, body: created.body });
    });

    it.each(['nope', 'NOT-A-SLUG', 'a'.repeat(65), '%20'])(
      'an unknown name (%s) → 404 not_found',
      async (name) => {
        const tenant = await api().newTenant();
        expectError(await api().call(`/v1/presets/${name}`, { key: tenant.inferenceKey }), 404, 'not_found');
      },
    );
  });

  describe('PATCH /v1/presets/{name}', () => {
    it('a description alone changes only the description and moves updated_at', async () => {
      const tenant = await api().newTenant();
      const created = await create(api(), tenant.provisioningKey, {
        name: 'p',
        description: 'old',
        config: supportConfig,
      });
      api().clock.offsetMs = 5_000;
      try {
        const patched = await api().call('/v1/presets/p', {
          method: 'PATCH',
          key: tenant.provisioningKey,
          json: { description: 'new' },
        });
        expect(patched.status, patched.text).toBe(200);
        expect(patched.body).toEqual({
          ...created.body,
          description: 'new',
          updated_at: expect.stringMatching(ISO),
        });
        expect(Date.parse(patched.body.updated_at)).toBeGreaterThan(Date.parse(created.body.created_at));
      } finally {
        api().clock.offsetMs = 0;
      }
    });

    it('a given config replaces the whole config; null clears the description', async () => {
      const tenant = await api().newTenant();
      await create(api(), tenant.provisioningKey, { name: 'p', description: 'd', config: supportConfig });
      const patched = await api().call('/v1/presets/p', {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { description: null, config: { temperature: 1 } },
      });
      expect(patched.status, patched.text).toBe(200);
      expect(patched.body).toMatchObject({ name: 'p', description: null, config: { temperature: 1 } });
      const read = await api().call('/v1/presets/p', { key: tenant.provisioningKey });
      expect(read.body.config).toEqual({ temperature: 1 });
    });

    it.each<[string, unknown, string]>([
      ['an empty body', {}, 'at least one'],
      ['a name (names do not change)', { name: 'q' }, 'name'],
      ['a config of the wrong shape', { config: { stream: true } }, 'body.config.stream'],
    ])('%s → 400 invalid_request', async (_, json, text) => {
      const tenant = await api().newTenant();
      await create(api(), tenant.provisioningKey, { name: 'p', config: { temperature: 1 } });
      const response = await api().call('/v1/presets/p', {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json,
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain(text);
      expect((await api().storage.getPreset(tenant.account.id, 'p'))?.config).toEqual({ temperature: 1 });
    });

    it('an unknown preset → 404 not_found', async () => {
      const tenant = await api().newTenant();
      const response = await api().call('/v1/presets/nope', {
        method: 'PATCH',
        key: tenant.provisioningKey,
        json: { description: 'x' },
      });
      expectError(response, 404, 'not_found');
    });
  });

  describe('DELETE /v1/presets/{name}', () => {
    it('200 with the deleted view and deleted: true; then GET and a second DELETE are 404', async () => {
      const tenant = await api().newTenant();
      const created = await create(api(), tenant.provisioningKey, {
        name: 'gone',
        config: { temperature: 1 },
      });
      const deleted = await api().call('/v1/presets/gone', { method: 'DELETE', key: tenant.provisioningKey });
      expect(deleted.status, deleted.text).toBe(200);
      expect(deleted.body).toEqual({ ...created.body, deleted: true });
      expectError(await api().call('/v1/presets/gone', { key: tenant.provisioningKey }), 404, 'not_found');
      const again = await api().call('/v1/presets/gone', { method: 'DELETE', key: tenant.provisioningKey });
      expectError(again, 404, 'not_found');
      // The name is free again.
      expect((await create(api(), tenant.provisioningKey, { name: 'gone', config: {} })).status).toBe(201);
    });
  });

  describe('isolation between accounts', () => {
    it("account B never sees, changes or deletes account A's presets, and may use the same name", async () => {
      const a = await api().newTenant();
      const b = await api().newTenant();
      const created = await create(api(), a.provisioningKey, {
        name: 'shared-name',
        config: { temperature: 1 },
      });
      expect((await api().call('/v1/presets', { key: b.provisioningKey })).body).toEqual({ data: [] });
      expect((await api().call('/v1/presets', { key: b.inferenceKey })).body).toEqual({ data: [] });
      expectError(await api().call('/v1/presets/shared-name', { key: b.inferenceKey }), 404, 'not_found');
      const patch = { method: 'PATCH', key: b.provisioningKey, json: { description: 'mine' } };
      expectError(await api().call('/v1/presets/shared-name', patch), 404, 'not_found');
      const remove = { method: 'DELETE', key: b.provisioningKey };
      expectError(await api().call('/v1/presets/shared-name', remove), 404, 'not_found');
      expect((await api().call('/v1/presets/shared-name', { key: a.provisioningKey })).body).toEqual(
        created.body,
      );

      const own = await create(api(), b.provisioningKey, { name: 'shared-name', config: { temperature: 0 } });
      expect(own.status, own.text).toBe(201);
      expect((await api().call('/v1/presets/shared-name', { key: a.inferenceKey })).body.config).toEqual({
        temperature: 1,
      });
    });
  });

  describe('access', () => {
    it.each([
      { method: 'POST', path: '/v1/presets', json: { name: 'x', config: {} } },
      { method: 'PATCH', path: '/v1/presets/p', json: { description: 'x' } },
      { method: 'DELETE', path: '/v1/presets/p' },
    ])('an inference key → 403 wrong_key_scope on $method $path', async ({ method, path, json }) => {
      const tenant = await api().newTenant();
      await create(api(), tenant.provisioningKey, { name: 'p', config: { temperature: 1 } });
      const response = await api().call(path, { method, key: tenant.inferenceKey, json });
      expectError(response, 403, 'wrong_key_scope');
      const presets = await api().storage.listPresets(tenant.account.id);
      expect(presets.map((p) => [p.name, p.description])).toEqual([['p', null]]);
    });

    it('no key → 401 unauthenticated', async () => {
      expectError(await api().call('/v1/presets'), 401, 'unauthenticated');
    });
  });
});
