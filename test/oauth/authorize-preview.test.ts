import { buildCatalogue, createGateway, parseGatewayConfig, type Storage } from '@tollgate/core';
import { expect, it } from 'vitest';
import { expectError } from '../helpers/http.js';
import { silentLogger } from '../helpers/start-e2e-gateway.js';
import {
  describeOAuthApi,
  expectOAuthError,
  type OAuthApi,
  OTHER_REDIRECT_URI,
  pkcePair,
  REDIRECT_URI,
} from './oauth-gateway.js';

/*
 * GET /v1/oauth/authorize?client_id=&redirect_uri=: what the approve page shows before the account
 * holder decides. The same checks as POST /v1/oauth/authorize, the same refusals, and nothing
 * stored.
 */

const preview = (api: OAuthApi, key: string | undefined, params: Record<string, string>) =>
  api.call(`/v1/oauth/authorize?${new URLSearchParams(params)}`, key === undefined ? {} : { key });

describeOAuthApi('GET /v1/oauth/authorize', (api) => {
  it('answers the client’s name and the registered redirect_uri, no-store, to any account’s provisioning key', async () => {
    const owner = await api().newTenant({ name: 'client owner' });
    const approver = await api().newTenant({ name: 'approver' });
    const client = await api().registerClient(owner.provisioningKey, {
      name: 'Notes “App”',
      redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI],
    });
    for (const redirectUri of [REDIRECT_URI, OTHER_REDIRECT_URI]) {
      const response = await preview(api(), approver.provisioningKey, {
        client_id: client.client_id,
        redirect_uri: redirectUri,
      });
      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({
        client_id: client.client_id,
        name: 'Notes “App”',
        redirect_uri: redirectUri,
      });
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('pragma')).toBe('no-cache');
    }
    const own = await preview(api(), owner.provisioningKey, {
      client_id: client.client_id,
      redirect_uri: REDIRECT_URI,
    });
    expect(own.status).toBe(200);
  });

  it('refuses what the POST refuses, alike: an unregistered redirect_uri in the RFC 6749 shape, the rest in the envelope', async () => {
    const owner = await api().newTenant();
    const approver = await api().newTenant();
    const client = await api().registerClient(owner.provisioningKey);
    const { challenge } = pkcePair();
    const unregistered: Record<string, string>[] = [
      { client_id: client.client_id, redirect_uri: `${REDIRECT_URI}/other` },
      { client_id: client.client_id, redirect_uri: REDIRECT_URI.toUpperCase() },
    ];
    const invalid: Record<string, string>[] = [
      { client_id: 'client_unknown', redirect_uri: REDIRECT_URI },
      { client_id: client.client_id },
      { redirect_uri: REDIRECT_URI },
      {},
      { client_id: '', redirect_uri: REDIRECT_URI },
      { client_id: client.client_id, redirect_uri: '' },
      { client_id: `${client.client_id}\u0000`, redirect_uri: REDIRECT_URI },
      { client_id: 'c'.repeat(201), redirect_uri: REDIRECT_URI },
      { client_id: client.client_id, redirect_uri: `${REDIRECT_URI}?${'x'.repeat(2000)}` },
    ];
    for (const params of [...unregistered, ...invalid]) {
      const viaGet = await preview(api(), approver.provisioningKey, params);
      const viaPost = await api().authorize(approver.provisioningKey, {
        ...params,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      if (unregistered.includes(params)) {
        expectOAuthError(viaGet, 400, 'invalid_request');
        expectOAuthError(viaPost, 400, 'invalid_request');
        expect(viaGet.body).toEqual(viaPost.body);
      } else {
        expectError(viaGet, 400, 'invalid_request');
        expectError(viaPost, 400, 'invalid_request');
        // The same message, but for where the parameter was read.
        expect(viaGet.body.error.message, JSON.stringify(params)).toBe(
          viaPost.body.error.message.replaceAll('body', 'query'),
        );
      }
    }
  });

  it('authentication comes first: no key → 401, an inference key → 403 (the gateway envelope)', async () => {
    const owner = await api().newTenant();
    const client = await api().registerClient(owner.provisioningKey);
    const params = { client_id: client.client_id, redirect_uri: REDIRECT_URI };
    expectError(await preview(api(), undefined, params), 401, 'unauthenticated');
    expectError(await preview(api(), owner.inferenceKey, params), 403, 'wrong_key_scope');
    expectError(await preview(api(), 'gw_live_nope', { client_id: 'x' }), 401, 'invalid_api_key');
  });

  it('stores nothing: a deleted client is unknown at once', async () => {
    const owner = await api().newTenant();
    const client = await api().registerClient(owner.provisioningKey);
    const params = { client_id: client.client_id, redirect_uri: REDIRECT_URI };
    expect((await preview(api(), owner.provisioningKey, params)).status).toBe(200);
    const deleted = await api().call(`/v1/oauth/clients/${client.client_id}`, {
      method: 'DELETE',
      key: owner.provisioningKey,
    });
    expect(deleted.status, deleted.text).toBeLessThan(300);
    expectError(await preview(api(), owner.provisioningKey, params), 400, 'invalid_request');
  });
});

it('the OpenAPI document describes GET /v1/oauth/authorize with its two required query parameters', async () => {
  const catalogue = buildCatalogue(parseGatewayConfig({ providers: {}, models: [] }), {});
  const gateway = createGateway({} as Storage, catalogue, { logger: silentLogger });
  const document = await (await gateway.fetch(new Request('http://gateway.test/api/openapi.json'))).json();
  const get = document.paths['/v1/oauth/authorize'].get;
  expect(get.operationId).toBe('oauthAuthorizePreview');
  expect(get['x-key-scope']).toBe('provisioning');
  expect(
    get.parameters.map((p: { name: string; in: string; required: boolean }) => [p.name, p.in, p.required]),
  ).toEqual([
    ['client_id', 'query', true],
    ['redirect_uri', 'query', true],
  ]);
  expect(Object.keys(get.responses)).toEqual(expect.arrayContaining(['200', '400']));
  expect(get.responses['200'].content['application/json'].schema).toBeDefined();
  expect(document.paths['/v1/oauth/authorize'].post.operationId).toBe('oauthAuthorize');
});
