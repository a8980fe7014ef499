import { expect, it } from 'vitest';
import { describeAccountApi } from './helpers/account-api-gateway.js';
import { expectError } from './helpers/http.js';

/*
 * A NUL character (U+0000) in any text the gateway stores, or looks a stored row up by, is `400
 * invalid_request` on every store alike (product.md, "Money and safety, made precise" → Inputs):
 * Postgres text cannot hold one, so without the check the same request was a 201 on SQLite and a
 * 500 on Postgres. In-process, on SQLite, PGlite and (with TEST_DATABASE_URL) a Postgres server.
 */

const NUL = '\u0000';
const chat = { messages: [{ role: 'user', content: 'hi' }] };

describeAccountApi('a NUL in stored text', (api) => {
  it.each([
    [
      'a guardrail name',
      '/v1/guardrails',
      { name: `pii${NUL}`, stage: 'input', category: 'email' },
      'body.name',
    ],
    [
      'a guardrail regex pattern',
      '/v1/guardrails',
      { name: 'r', stage: 'input', category: 'regex', pattern: `a${NUL}b` },
      'body.pattern',
    ],
    [
      'a guardrail keyword',
      '/v1/guardrails',
      { name: 'k', stage: 'output', category: 'keyword', pattern: `secret${NUL}` },
      'body.pattern',
    ],
    ['a key name', '/v1/keys', { name: `ci${NUL}` }, 'body.name'],
    ['a project id', '/v1/keys', { name: 'ci', project_id: `proj_${NUL}` }, 'body.project_id'],
    [
      'an OAuth client name',
      '/v1/oauth/clients',
      { name: `app${NUL}`, redirect_uris: ['https://app.example/cb'] },
      'body.name',
    ],
    [
      'an OAuth redirect URI',
      '/v1/oauth/clients',
      { name: 'app', redirect_uris: [`https://app.example/cb${NUL}`] },
      'body.redirect_uris.0',
    ],
    [
      'a preset description',
      '/v1/presets',
      { name: 'fast', description: `d${NUL}`, config: {} },
      'body.description',
    ],
    [
      'a preset config',
      '/v1/presets',
      { name: 'fast', config: { models: [`acme/${NUL}`] } },
      'body.config.models.0',
    ],
    [
      'a BYOK label',
      '/v1/byok',
      { provider: 'openai', api_key: 'sk-abc', label: `mine${NUL}` },
      'body.label',
    ],
  ])('%s → 400 invalid_request naming the field, nothing stored', async (_, path, json, field) => {
    const tenant = await api().newTenant();
    const response = await api().call(path, { key: tenant.provisioningKey, json });
    expectError(response, 400, 'invalid_request');
    expect(response.body.error.message).toContain(`${field}: must not contain NUL characters`);
    const listed = await api().call(path, { key: tenant.provisioningKey });
    const names = (listed.body.data as { name?: string }[]).map((row) => row.name);
    expect(names.filter((name) => name !== 'provisioning' && name !== 'inference')).toEqual([]);
  });

  it('a key renamed with a NUL → 400, the name kept', async () => {
    const tenant = await api().newTenant();
    const response = await api().call(`/v1/keys/${tenant.inferenceKeyId}`, {
      method: 'PATCH',
      key: tenant.provisioningKey,
      json: { name: `x${NUL}` },
    });
    expectError(response, 400, 'invalid_request');
    expect((await api().storage.getApiKey(tenant.account.id, tenant.inferenceKeyId))?.name).toBe('inference');
  });

  it('a batch custom_id or metadata value with a NUL → 400 invalid_request', async () => {
    const tenant = await api().newTenant();
    const item = { body: { model: 'acme/fast', ...chat } };
    for (const json of [
      { endpoint: '/v1/chat/completions', requests: [{ custom_id: `a${NUL}`, ...item }] },
      {
        endpoint: '/v1/chat/completions',
        requests: [{ custom_id: 'a', ...item }],
        metadata: { k: `v${NUL}` },
      },
    ]) {
      expectError(
        await api().call('/v1/batches', { key: tenant.inferenceKey, json }),
        400,
        'invalid_request',
      );
    }
  });

  it('a preset named with a NUL in a model call is no preset (404 not_found), never a 500', async () => {
    const tenant = await api().newTenant();
    for (const json of [
      { model: `@preset/fast${NUL}`, ...chat },
      { model: 'acme/fast', preset: `fast${NUL}`, ...chat },
    ]) {
      const response = await api().call('/v1/chat/completions', { key: tenant.inferenceKey, json });
      expectError(response, 404, 'not_found');
    }
  });
});
