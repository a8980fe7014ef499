import { createHash } from 'node:crypto';
import {
  buildCatalogue,
  createGateway,
  type GatewayLogger,
  parseGatewayConfig,
  type Storage,
} from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.js';
import { silentLogger } from '../helpers/start-e2e-gateway.js';
import {
  describeOAuthApi,
  expectOAuthError,
  formEncode,
  type OAuthApi,
  OTHER_REDIRECT_URI,
  REDIRECT_URI,
} from './oauth-gateway.js';

/*
 * OAuth client registration, the client-credentials grant, the token endpoint's request handling
 * and the metadata document, at the HTTP level through `gateway.fetch(new Request(...))`.
 */

const CLIENT_ID = /^client_[0-9a-z]{20}$/;
const CLIENT_SECRET = /^gw_cs_[A-Za-z0-9_-]{43}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

const clientCredentials = { grant_type: 'client_credentials' };

async function ownerWithClient(api: OAuthApi, name = 'Acme Notes') {
  const owner = await api.newTenant({ name: 'client owner' });
  const client = await api.registerClient(owner.provisioningKey, { name });
  return { owner, client };
}

describeOAuthApi('OAuth clients API', (api) => {
  it('POST → 201 {client_id, client_secret, name, redirect_uris, created_at}, the secret stored only hashed', async () => {
    const owner = await api().newTenant();
    const response = await api().call('/v1/oauth/clients', {
      key: owner.provisioningKey,
      json: { name: '  Acme Notes ', redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI] },
    });
    expect(response.status, response.text).toBe(201);
    expect(Object.keys(response.body)).toEqual([
      'client_id',
      'client_secret',
      'name',
      'redirect_uris',
      'created_at',
    ]);
    expect(response.body).toEqual({
      client_id: expect.stringMatching(CLIENT_ID),
      client_secret: expect.stringMatching(CLIENT_SECRET),
      name: 'Acme Notes',
      redirect_uris: [REDIRECT_URI, OTHER_REDIRECT_URI],
      created_at: expect.stringMatching(ISO),
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    const stored = await api().storage.getOAuthClient(response.body.client_id);
    expect(stored?.secretHash).toBe(sha256Hex(response.body.client_secret));
    const raw = await api().opened.dump();
    expect(raw.includes(response.body.client_secret)).toBe(false);
    expect(raw.includes(response.body.client_id)).toBe(true);
  });

  it("GET → {data: [{client_id, name, redirect_uris, created_at}]}, oldest first, never a secret, not another account's", async () => {
    const owner = await api().newTenant();
    const other = await api().newTenant();
    const first = await api().registerClient(owner.provisioningKey, { name: 'First' });
    const second = await api().registerClient(owner.provisioningKey, { name: 'Second' });
    await api().registerClient(other.provisioningKey, { name: 'Theirs' });

    const response = await api().call('/v1/oauth/clients', { key: owner.provisioningKey });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      data: [first, second].map(({ client_secret: _, ...view }) => view),
    });
    expect(response.text).not.toContain('gw_cs_');
  });

  it('DELETE → the view with deleted: true; then gone (404 not_found on a second delete)', async () => {
    const { owner, client } = await ownerWithClient(api());
    const path = `/v1/oauth/clients/${client.client_id}`;
    const response = await api().call(path, { method: 'DELETE', key: owner.provisioningKey });
    expect(response.status, response.text).toBe(200);
    const { client_secret: _, ...view } = client;
    expect(response.body).toEqual({ ...view, deleted: true });
    expect((await api().call('/v1/oauth/clients', { key: owner.provisioningKey })).body.data).toEqual([]);
    expectError(await api().call(path, { method: 'DELETE', key: owner.provisioningKey }), 404, 'not_found');
  });

  it("another account's client id, or an unknown one → 404 not_found on DELETE, and it is not listed", async () => {
    const { owner, client } = await ownerWithClient(api());
    const intruder = await api().newTenant();
    const path = `/v1/oauth/clients/${client.client_id}`;
    expectError(
      await api().call(path, { method: 'DELETE', key: intruder.provisioningKey }),
      404,
      'not_found',
    );
    expectError(
      await api().call('/v1/oauth/clients/client_doesnotexist', {
        method: 'DELETE',
        key: owner.provisioningKey,
      }),
      404,
      'not_found',
    );
    expect((await api().call('/v1/oauth/clients', { key: intruder.provisioningKey })).body.data).toEqual([]);
    expect(await api().storage.getOAuthClient(client.client_id)).not.toBeNull();
  });

  it('deleting a client revokes the keys it obtained (401 key_revoked), the rows kept as revoked', async () => {
    const { owner, client } = await ownerWithClient(api());
    const { body } = await api().token(clientCredentials, {
      basic: [client.client_id, client.client_secret],
    });
    expect((await api().chat(body.access_token)).status).toBe(200);
    await api().call(`/v1/oauth/clients/${client.client_id}`, {
      method: 'DELETE',
      key: owner.provisioningKey,
    });
    expectError(await api().chat(body.access_token), 401, 'key_revoked');
    const keys = await api().call('/v1/keys', { key: owner.provisioningKey });
    expect(
      keys.body.data.filter(
        (key: { oauth_client_id: string | null }) => key.oauth_client_id === client.client_id,
      ),
    ).toEqual([expect.objectContaining({ revoked: true, disabled: true, name: 'Acme Notes' })]);
    expectOAuthError(
      await api().token(clientCredentials, { basic: [client.client_id, client.client_secret] }),
      401,
      'invalid_client',
    );
  });

  it.each([
    ['no name', { name: undefined }, 'body.name'],
    ['an empty name', { name: '  ' }, 'body.name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'body.name'],
    ['no redirect_uris', { redirect_uris: undefined }, 'body.redirect_uris'],
    ['no redirect URI', { redirect_uris: [] }, 'body.redirect_uris'],
    [
      '11 redirect URIs',
      { redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) },
      'body.redirect_uris',
    ],
    ['a relative redirect URI', { redirect_uris: ['/callback'] }, 'body.redirect_uris.0'],
    ['an ftp redirect URI', { redirect_uris: ['ftp://a.example/cb'] }, 'body.redirect_uris.0'],
    [
      'a redirect URI with a fragment',
      { redirect_uris: ['https://a.example/cb#frag'] },
      'body.redirect_uris.0',
    ],
    ['a redirect URI with a space', { redirect_uris: ['https://a.example/c b'] }, 'body.redirect_uris.0'],
    ['a repeated redirect URI', { redirect_uris: [REDIRECT_URI, REDIRECT_URI] }, 'body.redirect_uris'],
    ['an unknown field', { client_secret: 'mine' }, 'body'],
  ])('POST with %s → 400 invalid_request naming %s', async (_, change, field) => {
    const owner = await api().newTenant();
    const response = await api().call('/v1/oauth/clients', {
      key: owner.provisioningKey,
      json: { name: 'App', redirect_uris: [REDIRECT_URI], ...change },
    });
    expectError(response, 400, 'invalid_request');
    expect(response.body.error.message).toContain(field);
  });

  it('an inference key → 403 wrong_key_scope on POST, GET and DELETE; no key → 401', async () => {
    const { owner, client } = await ownerWithClient(api());
    const key = owner.inferenceKey;
    const json = { name: 'App', redirect_uris: [REDIRECT_URI] };
    expectError(await api().call('/v1/oauth/clients', { key, json }), 403, 'wrong_key_scope');
    expectError(await api().call('/v1/oauth/clients', { key }), 403, 'wrong_key_scope');
    expectError(
      await api().call(`/v1/oauth/clients/${client.client_id}`, { method: 'DELETE', key }),
      403,
      'wrong_key_scope',
    );
    expectError(await api().call('/v1/oauth/clients'), 401, 'unauthenticated');
  });
});

describeOAuthApi('OAuth client credentials', (api) => {
  it('HTTP Basic → 200 with an inference key of the registering account, named after the client, no spend limit', async () => {
    const { owner, client } = await ownerWithClient(api(), 'Nightly batch');
    const response = await api().token(clientCredentials, {
      basic: [client.client_id, client.client_secret],
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      access_token: expect.stringMatching(/^gw_live_[A-Za-z0-9_-]{32}$/),
      token_type: 'Bearer',
      scope: 'inference',
      expires_in: 3600,
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('pragma')).toBe('no-cache');
    expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    const keys = await api().call('/v1/keys', { key: owner.provisioningKey });
    const minted = keys.body.data.find((key: { name: string }) => key.name === 'Nightly batch');
    expect(minted).toMatchObject({
      scope: 'inference',
      env: 'live',
      spend_limit_usd: null,
      disabled: false,
      oauth_client_id: client.client_id,
    });
    const lifetime = Date.parse(minted.expires_at) - api().clock.now();
    expect(lifetime).toBeGreaterThan(3_590_000);
    expect(lifetime).toBeLessThanOrEqual(3_600_000);
  });

  it('the token makes a chat call (200) and gets 403 wrong_key_scope on GET /v1/keys', async () => {
    const { client } = await ownerWithClient(api());
    const { body } = await api().token(clientCredentials, {
      basic: [client.client_id, client.client_secret],
    });
    const chat = await api().chat(body.access_token);
    expect(chat.status, chat.text).toBe(200);
    expectError(await api().call('/v1/keys', { key: body.access_token }), 403, 'wrong_key_scope');
  });

  it('credentials in a form body, in a JSON body, and Basic with a percent-encoded id all work', async () => {
    const { client } = await ownerWithClient(api());
    const credentials = { client_id: client.client_id, client_secret: client.client_secret };
    expect((await api().token({ ...clientCredentials, ...credentials })).status).toBe(200);
    expect((await api().token({ ...clientCredentials, ...credentials }, { as: 'json' })).status).toBe(200);
    const encodedId = client.client_id.replace('_', '%5F');
    const basic = await api().token(clientCredentials, {
      headers: { authorization: `Basic ${btoa(`${encodedId}:${formEncode(client.client_secret)}`)}` },
    });
    expect(basic.status, basic.text).toBe(200);
  });

  it('scope=inference is accepted; any other scope → 400 invalid_scope', async () => {
    const { client } = await ownerWithClient(api());
    const basic: [string, string] = [client.client_id, client.client_secret];
    expect((await api().token({ ...clientCredentials, scope: 'inference' }, { basic })).status).toBe(200);
    expectOAuthError(
      await api().token({ ...clientCredentials, scope: 'provisioning' }, { basic }),
      400,
      'invalid_scope',
    );
  });

  it('a wrong secret (Basic or body) → 401 invalid_client with WWW-Authenticate: Basic', async () => {
    const { client } = await ownerWithClient(api());
    const wrong = `${client.client_secret.slice(0, -1)}${client.client_secret.endsWith('A') ? 'B' : 'A'}`;
    for (const response of [
      await api().token(clientCredentials, { basic: [client.client_id, wrong] }),
      await api().token({ ...clientCredentials, client_id: client.client_id, client_secret: wrong }),
    ]) {
      expectOAuthError(response, 401, 'invalid_client');
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="tollgate"');
    }
  });

  it('an unknown client, a client without its secret, or no client at all → 401 invalid_client', async () => {
    const { client } = await ownerWithClient(api());
    expectOAuthError(
      await api().token(clientCredentials, { basic: ['client_doesnotexist', client.client_secret] }),
      401,
      'invalid_client',
    );
    expectOAuthError(
      await api().token({ ...clientCredentials, client_id: client.client_id }),
      401,
      'invalid_client',
    );
    expectOAuthError(await api().token(clientCredentials), 401, 'invalid_client');
    // Not looked up: Postgres cannot compare a NUL.
    expectOAuthError(
      await api().token({
        ...clientCredentials,
        client_id: 'client_\u0000x',
        client_secret: client.client_secret,
      }),
      401,
      'invalid_client',
    );
  });

  it('Basic and client_secret in the body at once, or a body client_id unlike the Basic one → 400 invalid_request', async () => {
    const { client } = await ownerWithClient(api());
    const basic: [string, string] = [client.client_id, client.client_secret];
    expectOAuthError(
      await api().token({ ...clientCredentials, client_secret: client.client_secret }, { basic }),
      400,
      'invalid_request',
    );
    expectOAuthError(
      await api().token({ ...clientCredentials, client_id: 'client_other' }, { basic }),
      400,
      'invalid_request',
    );
    expect((await api().token({ ...clientCredentials, client_id: client.client_id }, { basic })).status).toBe(
      200,
    );
  });

  it('a malformed Basic header, or a Bearer key instead of client credentials → 401 invalid_client', async () => {
    const owner = await api().newTenant();
    for (const authorization of ['Basic !!!', `Basic ${btoa('no-colon')}`, `Bearer ${owner.inferenceKey}`]) {
      expectOAuthError(
        await api().token(clientCredentials, { headers: { authorization } }),
        401,
        'invalid_client',
      );
    }
  });
});

describeOAuthApi('OAuth token endpoint requests', (api) => {
  it('an unsupported grant type → 400 unsupported_grant_type; none → 400 invalid_request', async () => {
    expectOAuthError(
      await api().token({ grant_type: 'password', username: 'u', password: 'p' }),
      400,
      'unsupported_grant_type',
    );
    expectOAuthError(
      await api().token({ grant_type: 'refresh_token', refresh_token: 'x' }),
      400,
      'unsupported_grant_type',
    );
    expectOAuthError(await api().token({}), 400, 'invalid_request');
  });

  it.each([
    ['text/plain', 'text/plain', 'grant_type=client_credentials'],
    ['no content type', null, 'grant_type=client_credentials'],
    ['malformed JSON', 'application/json', '{"grant_type":'],
    ['a JSON array', 'application/json', '["client_credentials"]'],
    ['a JSON number value', 'application/json', '{"grant_type":"client_credentials","client_id":7}'],
  ])('%s → 400 invalid_request in the RFC 6749 shape', async (_, contentType, body) => {
    // Bytes, not a string: `Request` would add `text/plain` to a string body without a type.
    const response = await api().call('/v1/oauth/token', {
      body: new TextEncoder().encode(body),
      headers: contentType ? { 'content-type': contentType } : {},
    });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expectOAuthError(response, 400, 'invalid_request');
  });

  it('a repeated parameter, or a body over 64 KiB → 400 invalid_request', async () => {
    const repeated = await api().call('/v1/oauth/token', {
      body: 'grant_type=client_credentials&grant_type=client_credentials',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expectOAuthError(repeated, 400, 'invalid_request');
    const large = await api().token({ ...clientCredentials, padding: 'x'.repeat(70_000) });
    expectOAuthError(large, 400, 'invalid_request');
  });

  it('form content types with parameters (charset) are accepted', async () => {
    const { client } = await ownerWithClient(api());
    const response = await api().token(
      { ...clientCredentials, client_id: client.client_id, client_secret: client.client_secret },
      { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' } },
    );
    expect(response.status, response.text).toBe(200);
  });
});

describeOAuthApi('OAuth server metadata', (api) => {
  it('GET /.well-known/oauth-authorization-server (no key) → the RFC 8414 document', async () => {
    const response = await api().call('/.well-known/oauth-authorization-server');
    expect(response.status, response.text).toBe(200);
    expect(response.body).toEqual({
      issuer: 'http://gateway.test',
      authorization_endpoint: 'http://gateway.test/dashboard/authorize',
      token_endpoint: 'http://gateway.test/v1/oauth/token',
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'client_credentials'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: ['inference'],
    });
    expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
  });
});

describe('OAuth outside the storage-backed flows', () => {
  const catalogue = buildCatalogue(parseGatewayConfig({ providers: {}, models: [] }), {});

  it('under a basePath the metadata is served at <base>/.well-known/… and names endpoints under the public URL', async () => {
    const gateway = createGateway({} as Storage, catalogue, {
      logger: silentLogger,
      basePath: '/llm',
      publicUrl: 'https://api.example/llm/',
      oauth: { approvePage: 'consent' },
    });
    const response = await gateway.fetch(
      new Request('https://api.example/llm/.well-known/oauth-authorization-server'),
    );
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      issuer: 'https://api.example/llm',
      authorization_endpoint: 'https://api.example/llm/consent',
      token_endpoint: 'https://api.example/llm/v1/oauth/token',
    });
    const outside = await gateway.fetch(
      new Request('https://api.example/.well-known/oauth-authorization-server'),
    );
    expect(outside.status).toBe(404);
  });

  it('the OpenAPI document describes the OAuth routes; the token request as a form and as JSON', async () => {
    const gateway = createGateway({} as Storage, catalogue, { logger: silentLogger });
    const document = await (await gateway.fetch(new Request('http://gateway.test/api/openapi.json'))).json();
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/v1/oauth/clients',
        '/v1/oauth/clients/{id}',
        '/v1/oauth/authorize',
        '/v1/oauth/token',
        '/.well-known/oauth-authorization-server',
      ]),
    );
    const token = document.paths['/v1/oauth/token'].post;
    expect(token.security).toEqual([]);
    expect(Object.keys(token.requestBody.content)).toEqual([
      'application/x-www-form-urlencoded',
      'application/json',
    ]);
    expect(Object.keys(document.paths['/v1/oauth/authorize'].post.requestBody.content)).toEqual([
      'application/json',
    ]);
  });

  it('an unexpected failure → 500 {error: server_error} with no-store, logged without the request', async () => {
    const logged: unknown[] = [];
    const logger: GatewayLogger = {
      ...silentLogger,
      error: (fields, message) => logged.push({ fields, message }),
    };
    const failing = {
      getOAuthClient: () => Promise.reject(new Error('database is gone')),
    } as unknown as Storage;
    const gateway = createGateway(failing, catalogue, { logger });
    const secret = `gw_cs_${'S'.repeat(43)}`;
    const response = await gateway.fetch(
      new Request('http://gateway.test/v1/oauth/token', {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${btoa(`client_x:${secret}`)}`,
        },
        body: 'grant_type=client_credentials',
      }),
    );
    const text = await response.text();
    expectOAuthError(
      { status: response.status, headers: response.headers, body: JSON.parse(text), text },
      500,
      'server_error',
    );
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged)).not.toContain(secret);
    expect(JSON.stringify(logged)).not.toContain('database is gone');
  });
});
