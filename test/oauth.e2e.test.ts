import { execFileSync } from 'node:child_process';
import { type GatewayConfig, parseGatewayConfig } from '@tollgate/core';
import * as oauth from 'oauth4webapi';
import { describe, expect, it } from 'vitest';
import { cachedTokensBody, jsonReply } from './helpers/chat-wire.js';
import { type ApiResponse, call, expectError, REQUEST_ID } from './helpers/http.js';
import { describeOnEachVariant, type E2eGateway, startE2eGateway } from './helpers/start-e2e-gateway.js';
import type { StorageVariant } from './helpers/storage-variants.js';
import type { Tenant } from './helpers/tenant.js';

/**
 * OAuth end to end, through the real Node server, driven by a real, spec-compliant OAuth client
 * library (oauth4webapi, unchanged): RFC 8414 discovery, the authorization code grant with PKCE S256
 * (the client's secret in the body or with HTTP Basic; without it, refused), the client credentials
 * grant (secret in the body and in HTTP Basic), and the RFC 6749 errors the library must understand
 * (`invalid_client` with its challenge, `invalid_grant` for a replayed code or a wrong verifier).
 * The approval step a browser would make is a plain `POST /v1/oauth/authorize` with the approving
 * account's provisioning key. The minted token is an inference key: a chat completion works, the
 * keys API answers 403 wrong_key_scope, and a spend limit approved at authorize is on the key.
 * Then the README's curl commands, sent as they are (form bodies, `-u` Basic, the openssl
 * verifier/challenge pipeline).
 */

const UPSTREAM_PATH = '/openai/v1/chat/completions';
const MODEL = 'acme/gpt';
const REDIRECT = 'https://app.example/callback';
const TOKEN = /^gw_live_[A-Za-z0-9_-]+$/;
const CLIENT_ID = /^client_/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
/** The library refuses plain http unless told; the server is on loopback. */
const insecure = { [oauth.allowInsecureRequests]: true } as const;

function oauthConfig(mockUrl: string): GatewayConfig {
  return parseGatewayConfig({
    providers: {
      openai: { format: 'openai', base_url: `${mockUrl}/openai/v1`, api_key: 'sk-openai-oauth-e2e' },
    },
    models: [
      {
        id: MODEL,
        max_output_tokens: 1000,
        endpoints: [
          {
            provider: 'openai',
            upstream_model: 'gpt-4o-mini',
            pricing: { prompt: '0.11', completion: '0.44' },
          },
        ],
      },
    ],
  });
}

async function startOAuthGateway(variant: StorageVariant): Promise<E2eGateway> {
  const gw = await startE2eGateway({ config: oauthConfig, open: () => variant.open() });
  gw.mock.setDefault(UPSTREAM_PATH, jsonReply(cachedTokensBody()));
  return gw;
}

interface RegisteredClient {
  client_id: string;
  client_secret: string;
  name: string;
  redirect_uris: string[];
  created_at: string;
}

async function register(
  url: string,
  provisioningKey: string,
  name: string,
  redirectUris: string[] = [REDIRECT],
): Promise<RegisteredClient> {
  const response = await call(url, '/v1/oauth/clients', {
    key: provisioningKey,
    json: { name, redirect_uris: redirectUris },
  });
  expect(response.status, response.text).toBe(201);
  return response.body as RegisteredClient;
}

/** The browser step: the account holder approves with their provisioning key. */
function approve(url: string, provisioningKey: string, body: Record<string, unknown>): Promise<ApiResponse> {
  return call(url, '/v1/oauth/authorize', { key: provisioningKey, json: body });
}

async function discover(url: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(url);
  const response = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
  return oauth.processDiscoveryResponse(issuer, response);
}

/** A PKCE pair made by the library. */
async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = oauth.generateRandomCodeVerifier();
  return { verifier, challenge: await oauth.calculatePKCECodeChallenge(verifier) };
}

/** What a token endpoint failure looked like to the library: the status and the RFC 6749 `error`. */
interface TokenFailure {
  kind: 'body' | 'challenge';
  status: number;
  error: string;
  description: unknown;
  scheme: string | null;
  cacheControl: string | null;
}

async function tokenFailure(attempt: Promise<unknown>): Promise<TokenFailure> {
  try {
    await attempt;
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) {
      return {
        kind: 'body',
        status: error.status,
        error: error.error,
        description: error.error_description,
        scheme: null,
        cacheControl: error.response.headers.get('cache-control'),
      };
    }
    if (error instanceof oauth.WWWAuthenticateChallengeError) {
      // The body is left unread by the library: the RFC 6749 error is there.
      const body = (await error.response.json()) as { error: string; error_description?: string };
      return {
        kind: 'challenge',
        status: error.status,
        error: body.error,
        description: body.error_description,
        scheme: error.cause[0]?.scheme ?? null,
        cacheControl: error.response.headers.get('cache-control'),
      };
    }
    throw error;
  }
  throw new Error('the token request succeeded; a failure was expected');
}

/** The token endpoint's answer headers every response must carry. */
function expectTokenHeaders(response: Response): void {
  expect(response.headers.get('cache-control')).toMatch(/no-store/);
  expect(response.headers.get('x-gateway-request-id')).toMatch(REQUEST_ID);
}

/** Runs the authorization code grant with the library; the approval is made by `approver`. */
async function codeGrant(
  url: string,
  as: oauth.AuthorizationServer,
  client: RegisteredClient,
  approver: Tenant,
  auth: oauth.ClientAuth,
  extra: Record<string, unknown> = {},
) {
  const { verifier, challenge } = await pkce();
  const state = oauth.generateRandomState();
  const approval = await approve(url, approver.provisioningKey, {
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    ...extra,
  });
  expect(approval.status, approval.text).toBe(200);
  const callback = oauth.validateAuthResponse(
    as,
    { client_id: client.client_id },
    new URL(approval.body.redirect_to),
    state,
  );
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    { client_id: client.client_id },
    auth,
    callback,
    REDIRECT,
    verifier,
    insecure,
  );
  expectTokenHeaders(response);
  const tokens = await oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, response);
  return { tokens, approval: approval.body as { code: string; redirect_to: string }, verifier, callback };
}

async function clientCredentials(
  as: oauth.AuthorizationServer,
  client: RegisteredClient,
  auth: oauth.ClientAuth,
) {
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    { client_id: client.client_id },
    auth,
    new URLSearchParams(),
    insecure,
  );
  expectTokenHeaders(response);
  return oauth.processClientCredentialsResponse(as, { client_id: client.client_id }, response);
}

function chat(url: string, key: string): Promise<ApiResponse> {
  return call(url, '/v1/chat/completions', {
    key,
    json: { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 50 },
  });
}

/** `GET /v1/key` with the token. */
async function keyInfo(url: string, key: string) {
  const response = await call(url, '/v1/key', { key });
  expect(response.status, response.text).toBe(200);
  return response.body.data;
}

/** Runs the documented openssl pipeline (README) for a verifier and its S256 challenge. */
function opensslPair(): { verifier: string; challenge: string } {
  const script = [
    `VERIFIER=$(openssl rand -base64 48 | tr '+/' '-_' | tr -d '=\\n')`,
    `CHALLENGE=$(printf '%s' "$VERIFIER" | openssl dgst -sha256 -binary | openssl base64 -A | tr '+/' '-_' | tr -d '=')`,
    `printf '%s %s' "$VERIFIER" "$CHALLENGE"`,
  ].join('\n');
  const [verifier, challenge] = execFileSync('bash', ['-c', script], { encoding: 'utf8' }).split(' ');
  return { verifier: verifier!, challenge: challenge! };
}

const hasOpenssl = (() => {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describeOnEachVariant('OAuth with a standard client library (oauth4webapi)', startOAuthGateway, (gw) => {
  describe('discovery (RFC 8414)', () => {
    it('the library discovers the server: issuer is its address, the approve page, the token endpoint, S256 only', async () => {
      const { url } = gw();
      const as = await discover(url);
      expect(new URL(as.issuer).href).toBe(new URL(url).href);
      expect(as.authorization_endpoint).toBe(new URL('/dashboard/authorize', url).href);
      expect(as.token_endpoint).toBe(new URL('/v1/oauth/token', url).href);
      expect(as.code_challenge_methods_supported).toEqual(['S256']);
      expect([...(as.token_endpoint_auth_methods_supported ?? [])].sort()).toEqual([
        'client_secret_basic',
        'client_secret_post',
      ]);
      expect(as.grant_types_supported ?? ['authorization_code', 'client_credentials']).toEqual(
        expect.arrayContaining(['authorization_code', 'client_credentials']),
      );
    });
  });

  describe('authorization code + PKCE', () => {
    it('without its secret (None()) the client is refused: invalid_client 401, the code left unused', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Secretless app');
      const as = await discover(url);
      const failure = await tokenFailure(codeGrant(url, as, client, owner, oauth.None()));
      expect(failure).toMatchObject({ status: 401, error: 'invalid_client', scheme: 'basic' });
      const keys = await call(url, '/v1/keys', { key: owner.provisioningKey });
      expect(keys.body.data.map((k: { name: string }) => k.name)).not.toContain('Secretless app');
    });

    it('a client sending its secret in the body (ClientSecretPost) gets an inference key of the approving account', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Public app');
      const as = await discover(url);
      const post = oauth.ClientSecretPost(client.client_secret);
      const { tokens, approval, callback } = await codeGrant(url, as, client, owner, post);
      expect(approval.redirect_to.startsWith(`${REDIRECT}?`)).toBe(true);
      expect(callback.get('code')).toBe(approval.code);
      expect(tokens.access_token).toMatch(TOKEN);
      // The library lower-cases token_type; the server said "Bearer".
      expect(tokens.token_type).toBe('bearer');
      expect(tokens.scope).toBe('inference');
      const info = await keyInfo(url, tokens.access_token);
      expect(info).toMatchObject({ scope: 'inference', account_id: owner.account.id });
      expect(info.name).toContain('Public app');
    });

    it('a confidential client (ClientSecretBasic) too; the key is the approver’s, not the registrant’s', async () => {
      const { url } = gw();
      const developer = await gw().newTenant({ name: 'app developer' });
      const user = await gw().newTenant({ name: 'end user' });
      const client = await register(url, developer.provisioningKey, 'Confidential app');
      const as = await discover(url);
      const { tokens } = await codeGrant(
        url,
        as,
        client,
        user,
        oauth.ClientSecretBasic(client.client_secret),
      );
      expect(tokens.access_token).toMatch(TOKEN);
      const info = await keyInfo(url, tokens.access_token);
      expect(info.account_id).toBe(user.account.id);
      // The developer's account holds no key of it.
      const developerKeys = await call(url, '/v1/keys', { key: developer.provisioningKey });
      expect(developerKeys.body.data.map((k: { prefix: string }) => k.prefix)).not.toContain(info.prefix);
    });

    it('the minted token makes a chat completion (200), gets 403 wrong_key_scope on /v1/keys, and carries the approved spend limit', async () => {
      const { url, mock } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Spend-capped app');
      const as = await discover(url);
      const { tokens } = await codeGrant(
        url,
        as,
        client,
        owner,
        oauth.ClientSecretPost(client.client_secret),
        {
          spend_limit_usd: 2.5,
        },
      );
      const before = mock.received.length;
      const answer = await chat(url, tokens.access_token);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.gateway.cost_micros).toBeGreaterThan(0);
      expect(mock.received.length).toBe(before + 1);
      expectError(await call(url, '/v1/keys', { key: tokens.access_token }), 403, 'wrong_key_scope');
      const info = await keyInfo(url, tokens.access_token);
      expect(info.key_spend).toMatchObject({ limit_usd: 2.5, limit_micros: 2_500_000 });
      expect(info.key_spend.spent_micros).toBe(answer.body.gateway.cost_micros);
      // The same key, seen through the keys API of the approving account.
      const listed = await call(url, '/v1/keys', { key: owner.provisioningKey });
      const key = listed.body.data.find((k: { id: string }) => k.id === info.id);
      expect(key).toMatchObject({ scope: 'inference', spend_limit_usd: 2.5, disabled: false });
      expect(key.name).toContain('Spend-capped app');
    });

    it('a replayed code → invalid_grant (ResponseBodyError), and the key its first use minted is revoked', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Replay app');
      const as = await discover(url);
      const post = oauth.ClientSecretPost(client.client_secret);
      const { tokens, verifier, callback } = await codeGrant(url, as, client, owner, post);
      expect((await keyInfo(url, tokens.access_token)).scope).toBe('inference');
      const replay = await oauth.authorizationCodeGrantRequest(
        as,
        { client_id: client.client_id },
        post,
        callback,
        REDIRECT,
        verifier,
        insecure,
      );
      expectTokenHeaders(replay);
      const failure = await tokenFailure(
        oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, replay),
      );
      expect(failure).toMatchObject({ kind: 'body', status: 400, error: 'invalid_grant' });
      expectError(await call(url, '/v1/key', { key: tokens.access_token }), 401, 'key_revoked');
      expect((await chat(url, tokens.access_token)).status).toBe(401);
    });

    it('a wrong code_verifier → invalid_grant, no key minted', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Verifier app');
      const as = await discover(url);
      const { challenge } = await pkce();
      const state = oauth.generateRandomState();
      const approval = await approve(url, owner.provisioningKey, {
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state,
      });
      expect(approval.status, approval.text).toBe(200);
      const callback = oauth.validateAuthResponse(
        as,
        { client_id: client.client_id },
        new URL(approval.body.redirect_to),
        state,
      );
      const keysBefore = (await call(url, '/v1/keys', { key: owner.provisioningKey })).body.data.length;
      const response = await oauth.authorizationCodeGrantRequest(
        as,
        { client_id: client.client_id },
        oauth.ClientSecretPost(client.client_secret),
        callback,
        REDIRECT,
        oauth.generateRandomCodeVerifier(),
        insecure,
      );
      const failure = await tokenFailure(
        oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, response),
      );
      expect(failure).toMatchObject({ status: 400, error: 'invalid_grant' });
      expect(failure.cacheControl).toMatch(/no-store/);
      const keysAfter = (await call(url, '/v1/keys', { key: owner.provisioningKey })).body.data.length;
      expect(keysAfter).toBe(keysBefore);
    });

    it('a code is good for 10 minutes only', async () => {
      const { url, clock } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Slow app');
      const as = await discover(url);
      const { verifier, challenge } = await pkce();
      const approval = await approve(url, owner.provisioningKey, {
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      });
      expect(approval.status, approval.text).toBe(200);
      const callback = oauth.validateAuthResponse(
        as,
        { client_id: client.client_id },
        new URL(approval.body.redirect_to),
        oauth.expectNoState,
      );
      clock.offsetMs = 10 * 60_000 + 1_000;
      try {
        const response = await oauth.authorizationCodeGrantRequest(
          as,
          { client_id: client.client_id },
          oauth.ClientSecretPost(client.client_secret),
          callback,
          REDIRECT,
          verifier,
          insecure,
        );
        const failure = await tokenFailure(
          oauth.processAuthorizationCodeResponse(as, { client_id: client.client_id }, response),
        );
        expect(failure).toMatchObject({ status: 400, error: 'invalid_grant' });
      } finally {
        clock.offsetMs = 0;
      }
    });

    it('authorize refuses an unregistered redirect_uri with an RFC 6749 body, a non-S256 method with the envelope (400)', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Strict app');
      const { challenge } = await pkce();
      const base = {
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      };
      const unregistered = await approve(url, owner.provisioningKey, {
        ...base,
        redirect_uri: 'https://evil.example/callback',
      });
      expect(unregistered.status, unregistered.text).toBe(400);
      expect(unregistered.body).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
      for (const body of [
        { ...base, code_challenge_method: 'plain' },
        { ...base, code_challenge: undefined, code_challenge_method: undefined },
      ]) {
        expectError(await approve(url, owner.provisioningKey, body), 400, 'invalid_request');
      }
      // An inference key cannot approve.
      const withInference = await approve(url, owner.inferenceKey, base);
      expect(withInference.status).toBe(403);
    });
  });

  describe('client credentials', () => {
    it('ClientSecretPost and ClientSecretBasic each mint an inference key of the registering account', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Backend job');
      const as = await discover(url);
      const viaPost = await clientCredentials(as, client, oauth.ClientSecretPost(client.client_secret));
      const viaBasic = await clientCredentials(as, client, oauth.ClientSecretBasic(client.client_secret));
      for (const tokens of [viaPost, viaBasic]) {
        expect(tokens.access_token).toMatch(TOKEN);
        expect(tokens.token_type).toBe('bearer');
        expect(tokens.scope).toBe('inference');
        const info = await keyInfo(url, tokens.access_token);
        expect(info).toMatchObject({ scope: 'inference', account_id: owner.account.id });
        expect((await chat(url, tokens.access_token)).status).toBe(200);
        expectError(await call(url, '/v1/keys', { key: tokens.access_token }), 403, 'wrong_key_scope');
        expect(tokens.expires_in).toBeGreaterThan(3_590);
        expect(tokens.expires_in).toBeLessThanOrEqual(3_600);
      }
      // The second request, well within the first token's life, gets the same token back.
      expect(viaBasic.access_token).toBe(viaPost.access_token);
    });

    it('a wrong secret → invalid_client 401 with a WWW-Authenticate challenge the library reports', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Wrong secret');
      const as = await discover(url);
      const basic = await tokenFailure(
        clientCredentials(as, client, oauth.ClientSecretBasic('not-the-secret')),
      );
      expect(basic).toMatchObject({ status: 401, error: 'invalid_client', scheme: 'basic' });
      expect(basic.cacheControl).toMatch(/no-store/);
      const post = await tokenFailure(
        clientCredentials(as, client, oauth.ClientSecretPost('not-the-secret')),
      );
      expect(post).toMatchObject({ status: 401, error: 'invalid_client' });
      // Without a secret, client_credentials is not for a public client.
      const none = await tokenFailure(clientCredentials(as, client, oauth.None()));
      expect(none.status).toBeGreaterThanOrEqual(400);
      expect(['invalid_client', 'unauthorized_client']).toContain(none.error);
    });

    it('an unknown grant type → unsupported_grant_type', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Password app');
      const as = await discover(url);
      const response = await oauth.genericTokenEndpointRequest(
        as,
        { client_id: client.client_id },
        oauth.ClientSecretBasic(client.client_secret),
        'password',
        new URLSearchParams({ username: 'u', password: 'p' }),
        insecure,
      );
      expectTokenHeaders(response);
      const failure = await tokenFailure(
        oauth.processGenericTokenEndpointResponse(as, { client_id: client.client_id }, response),
      );
      expect(failure).toMatchObject({ status: 400, error: 'unsupported_grant_type' });
    });
  });

  describe('clients', () => {
    it('deleting a client revokes the keys it minted; the client can no longer get tokens', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'Short-lived app');
      const as = await discover(url);
      const tokens = await clientCredentials(as, client, oauth.ClientSecretBasic(client.client_secret));
      const deleted = await call(url, `/v1/oauth/clients/${client.client_id}`, {
        method: 'DELETE',
        key: owner.provisioningKey,
      });
      expect(deleted.status, deleted.text).toBeLessThan(300);
      const listed = await call(url, '/v1/oauth/clients', { key: owner.provisioningKey });
      expect(listed.body.data.map((c: { client_id: string }) => c.client_id)).not.toContain(client.client_id);
      expectError(await chat(url, tokens.access_token), 401, 'key_revoked');
      const failure = await tokenFailure(
        clientCredentials(as, client, oauth.ClientSecretBasic(client.client_secret)),
      );
      expect(failure).toMatchObject({ status: 401, error: 'invalid_client' });
    });
  });

  describe("the README's curl commands, sent as written", () => {
    it('curl -s localhost:8787/.well-known/oauth-authorization-server', async () => {
      const { url } = gw();
      const response = await fetch(`${url}/.well-known/oauth-authorization-server`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const metadata = await response.json();
      expect(metadata).toMatchObject({
        issuer: url,
        authorization_endpoint: `${url}/dashboard/authorize`,
        token_endpoint: `${url}/v1/oauth/token`,
        code_challenge_methods_supported: ['S256'],
      });
    });

    it('register (201, secret shown once), list (no secrets), delete', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const other = await gw().newTenant();
      const created = await call(url, '/v1/oauth/clients', {
        key: owner.provisioningKey,
        json: { name: 'My app', redirect_uris: [REDIRECT] },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.body).toEqual({
        client_id: expect.stringMatching(CLIENT_ID),
        client_secret: expect.any(String),
        name: 'My app',
        redirect_uris: [REDIRECT],
        created_at: expect.stringMatching(ISO),
      });
      expect(created.body.client_secret.length).toBeGreaterThanOrEqual(32);
      const listed = await call(url, '/v1/oauth/clients', { key: owner.provisioningKey });
      expect(listed.status, listed.text).toBe(200);
      expect(listed.body.data).toEqual([
        expect.objectContaining({
          client_id: created.body.client_id,
          name: 'My app',
          redirect_uris: [REDIRECT],
        }),
      ]);
      expect(listed.text).not.toContain(created.body.client_secret);
      expect(listed.body.data[0]).not.toHaveProperty('client_secret');
      // Another account sees none of it, and cannot delete it.
      expect((await call(url, '/v1/oauth/clients', { key: other.provisioningKey })).body.data).toEqual([]);
      const foreign = await call(url, `/v1/oauth/clients/${created.body.client_id}`, {
        method: 'DELETE',
        key: other.provisioningKey,
      });
      expect(foreign.status).toBe(404);
      // An inference key cannot register.
      const inference = await call(url, '/v1/oauth/clients', {
        key: owner.inferenceKey,
        json: { name: 'x', redirect_uris: [REDIRECT] },
      });
      expectError(inference, 403, 'wrong_key_scope');
      const deleted = await call(url, `/v1/oauth/clients/${created.body.client_id}`, {
        method: 'DELETE',
        key: owner.provisioningKey,
      });
      expect(deleted.status, deleted.text).toBeLessThan(300);
      expect((await call(url, '/v1/oauth/clients', { key: owner.provisioningKey })).body.data).toEqual([]);
    });

    it.skipIf(!hasOpenssl)(
      'openssl verifier/challenge, authorize, then curl -u … -d … (form-encoded) exchanges the code',
      async () => {
        const { url } = gw();
        const owner = await gw().newTenant();
        const client = await register(url, owner.provisioningKey, 'My app');
        const { verifier, challenge } = opensslPair();
        expect(verifier).toMatch(/^[A-Za-z0-9_-]{43,128}$/);
        // The pipeline computes what the library (and RFC 7636) computes.
        expect(challenge).toBe(await oauth.calculatePKCECodeChallenge(verifier));
        const approval = await approve(url, owner.provisioningKey, {
          client_id: client.client_id,
          redirect_uri: REDIRECT,
          code_challenge: challenge,
          code_challenge_method: 'S256',
          state: 'xyz',
          spend_limit_usd: 5,
        });
        expect(approval.status, approval.text).toBe(200);
        expect(Object.keys(approval.body).sort()).toEqual(['code', 'redirect_to']);
        const redirect = new URL(approval.body.redirect_to);
        expect(`${redirect.origin}${redirect.pathname}`).toBe(REDIRECT);
        expect(redirect.searchParams.get('code')).toBe(approval.body.code);
        expect(redirect.searchParams.get('state')).toBe('xyz');
        // curl -u id:secret -d a=b -d c=d: HTTP Basic, `application/x-www-form-urlencoded`, no charset.
        const form = new URLSearchParams({
          grant_type: 'authorization_code',
          code: approval.body.code,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        });
        const headers = {
          authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        };
        const response = await fetch(`${url}/v1/oauth/token`, {
          method: 'POST',
          headers,
          body: form.toString(),
        });
        expect(response.status).toBe(200);
        expectTokenHeaders(response);
        const body = await response.json();
        expect(body).toEqual({
          access_token: expect.stringMatching(TOKEN),
          token_type: 'Bearer',
          scope: 'inference',
        });
        expect((await keyInfo(url, body.access_token)).key_spend.limit_usd).toBe(5);
        // Again: the code is single-use.
        const again = await fetch(`${url}/v1/oauth/token`, {
          method: 'POST',
          headers,
          body: form.toString(),
        });
        expect(again.status).toBe(400);
        expectTokenHeaders(again);
        expect((await again.json()).error).toBe('invalid_grant');
      },
    );

    it('curl -u "$CLIENT_ID:$CLIENT_SECRET" -d grant_type=client_credentials; JSON bodies are accepted too', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'My backend');
      const basic = `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}`;
      const viaBasic = await fetch(`${url}/v1/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      expect(viaBasic.status).toBe(200);
      expectTokenHeaders(viaBasic);
      expect(await viaBasic.json()).toEqual({
        access_token: expect.stringMatching(TOKEN),
        token_type: 'Bearer',
        scope: 'inference',
        expires_in: expect.any(Number),
      });
      const viaJson = await fetch(`${url}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          grant_type: 'client_credentials',
          client_id: client.client_id,
          client_secret: client.client_secret,
        }),
      });
      expect(viaJson.status).toBe(200);
      expect((await viaJson.json()).access_token).toMatch(TOKEN);
    });

    it('errors are RFC 6749 bodies, never the gateway envelope: invalid_client 401 with WWW-Authenticate', async () => {
      const { url } = gw();
      const owner = await gw().newTenant();
      const client = await register(url, owner.provisioningKey, 'My app');
      const basic = `Basic ${Buffer.from(`${client.client_id}:wrong`).toString('base64')}`;
      const response = await fetch(`${url}/v1/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials',
      });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toMatch(/^Basic/i);
      expectTokenHeaders(response);
      const body = await response.json();
      expect(body.error).toBe('invalid_client');
      expect(typeof body.error_description).toBe('string');
      expect(Object.keys(body).every((k) => ['error', 'error_description', 'error_uri'].includes(k))).toBe(
        true,
      );
      // A form without grant_type.
      const bare = await fetch(`${url}/v1/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `client_id=${client.client_id}`,
      });
      expect(bare.status).toBe(400);
      expectTokenHeaders(bare);
      expect((await bare.json()).error).toBe('invalid_request');
    });
  });
});
