import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/http.js';
import type { Tenant } from '../helpers/tenant.js';
import {
  describeOAuthApi,
  expectOAuthError,
  type OAuthApi,
  OTHER_REDIRECT_URI,
  pkcePair,
  REDIRECT_URI,
  type RegisteredClient,
} from './oauth-gateway.js';

/*
 * The authorization-code grant with PKCE at the HTTP level, in-process: an account registers a
 * client, another account's holder approves it (POST /v1/oauth/authorize with a provisioning key),
 * and the client redeems the code at POST /v1/oauth/token for an inference key of the approver.
 */

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const BASE64URL_43 = /^[A-Za-z0-9_-]{43}$/;

interface Flow {
  owner: Tenant;
  approver: Tenant;
  client: RegisteredClient;
  verifier: string;
  code: string;
}

/** A client of one account, approved by another account's holder for REDIRECT_URI. */
async function approvedFlow(api: OAuthApi, extra: Record<string, unknown> = {}): Promise<Flow> {
  const owner = await api.newTenant({ name: 'client owner' });
  const approver = await api.newTenant({ name: 'approver' });
  const client = await api.registerClient(owner.provisioningKey);
  const { verifier, challenge } = pkcePair();
  const response = await api.authorize(approver.provisioningKey, {
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  expect(response.status, response.text).toBe(200);
  return { owner, approver, client, verifier, code: response.body.code };
}

/** The token request for `flow`, the client's secret in the form body, with any parameter replaced. */
function redeem(api: OAuthApi, flow: Flow, overrides: Record<string, string> = {}) {
  return api.token({
    grant_type: 'authorization_code',
    code: flow.code,
    redirect_uri: REDIRECT_URI,
    client_id: flow.client.client_id,
    client_secret: flow.client.client_secret,
    code_verifier: flow.verifier,
    ...overrides,
  });
}

describeOAuthApi('OAuth authorization code with PKCE', (api) => {
  describe('POST /v1/oauth/authorize', () => {
    it('200 {code, redirect_to}: the code and state appended to the redirect URI, no-store, request id', async () => {
      const owner = await api().newTenant();
      const client = await api().registerClient(owner.provisioningKey);
      const { challenge } = pkcePair();
      const response = await api().authorize(owner.provisioningKey, {
        client_id: client.client_id,
        redirect_uri: OTHER_REDIRECT_URI,
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'af0ifjsldkj&x=1',
      });
      expect(response.status, response.text).toBe(200);
      expect(Object.keys(response.body).sort()).toEqual(['code', 'redirect_to']);
      expect(response.body.code).toMatch(BASE64URL_43);
      const redirect = new URL(response.body.redirect_to);
      expect(`${redirect.origin}${redirect.pathname}`).toBe('http://localhost:8788/cb');
      expect([...redirect.searchParams]).toEqual([
        ['app', 'notes'],
        ['code', response.body.code],
        ['state', 'af0ifjsldkj&x=1'],
      ]);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    });

    it('without state, redirect_to carries the code only; the code is stored as its SHA-256, for 10 minutes', async () => {
      const flow = await approvedFlow(api());
      const stored = await api().storage.getOAuthCode(sha256Hex(flow.code));
      expect(stored).toMatchObject({
        clientId: flow.client.client_id,
        accountId: flow.approver.account.id,
        redirectUri: REDIRECT_URI,
        spendLimitMicros: null,
        usedAt: null,
        keyId: null,
      });
      expect(stored!.expiresAt - stored!.createdAt).toBe(10 * 60_000);
      const raw = await api().opened.dump();
      expect(raw.includes(flow.code)).toBe(false);
      expect(raw.includes(sha256Hex(flow.code))).toBe(true);
    });

    it('an unregistered redirect_uri → 400 invalid_request in the RFC 6749 shape (a near miss too)', async () => {
      const owner = await api().newTenant();
      const client = await api().registerClient(owner.provisioningKey);
      for (const redirectUri of ['https://evil.example/cb', `${REDIRECT_URI}/`, `${REDIRECT_URI}?x=1`]) {
        const response = await api().authorize(owner.provisioningKey, {
          client_id: client.client_id,
          redirect_uri: redirectUri,
          code_challenge: pkcePair().challenge,
          code_challenge_method: 'S256',
        });
        expectOAuthError(response, 400, 'invalid_request');
        expect(response.body.error_description).toMatch(/redirect_uri/);
      }
    });

    it('an unknown client_id → 400 invalid_request in the gateway envelope', async () => {
      const owner = await api().newTenant();
      const response = await api().authorize(owner.provisioningKey, {
        client_id: 'client_doesnotexist0000000',
        redirect_uri: REDIRECT_URI,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain('body.client_id');
    });

    it.each([
      ['code_challenge_method plain', { code_challenge_method: 'plain' }],
      ['no code_challenge_method', { code_challenge_method: undefined }],
      ['no code_challenge', { code_challenge: undefined }],
      ['a challenge of 42 characters', { code_challenge: 'a'.repeat(42) }],
      ['a padded challenge', { code_challenge: `${'a'.repeat(43)}=` }],
      ['a challenge in plain base64', { code_challenge: `${'a'.repeat(42)}+` }],
      ['a negative spend limit', { spend_limit_usd: -1 }],
      ['a spend limit with 7 decimals', { spend_limit_usd: 0.0000001 }],
      ['a spend limit as a string', { spend_limit_usd: '5' }],
      ['a state that is not a string', { state: 42 }],
      ['no redirect_uri', { redirect_uri: undefined }],
      ['a client_id with a NUL character', { client_id: 'client_\u0000x' }],
    ])('%s → 400 invalid_request in the gateway envelope', async (_, change) => {
      const owner = await api().newTenant();
      const client = await api().registerClient(owner.provisioningKey);
      const response = await api().authorize(owner.provisioningKey, {
        client_id: client.client_id,
        redirect_uri: REDIRECT_URI,
        code_challenge: pkcePair().challenge,
        code_challenge_method: 'S256',
        ...change,
      });
      expectError(response, 400, 'invalid_request');
    });

    it('a body that is not JSON → 400 invalid_request in the gateway envelope', async () => {
      const owner = await api().newTenant();
      const response = await api().call('/v1/oauth/authorize', {
        key: owner.provisioningKey,
        body: 'client_id=x',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expectError(response, 400, 'invalid_request');
    });

    it('no key → 401 unauthenticated, an inference key → 403 wrong_key_scope (the gateway envelope)', async () => {
      const owner = await api().newTenant();
      const body = { client_id: 'client_x', redirect_uri: REDIRECT_URI };
      expectError(await api().call('/v1/oauth/authorize', { json: body }), 401, 'unauthenticated');
      expectError(await api().authorize(owner.inferenceKey, body), 403, 'wrong_key_scope');
    });
  });

  describe('POST /v1/oauth/token, grant_type=authorization_code', () => {
    it('200 {access_token, token_type, scope}: an inference key of the approving account, named after the client, with the approved spend limit', async () => {
      const flow = await approvedFlow(api(), { spend_limit_usd: 2.5, state: 's' });
      const response = await redeem(api(), flow);
      expect(response.status, response.text).toBe(200);
      expect(response.body).toEqual({
        access_token: expect.stringMatching(/^gw_live_[A-Za-z0-9_-]{32}$/),
        token_type: 'Bearer',
        scope: 'inference',
      });
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('pragma')).toBe('no-cache');
      expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');

      const keys = await api().call('/v1/keys', { key: flow.approver.provisioningKey });
      const minted = keys.body.data.find((key: { name: string }) => key.name === 'Acme Notes');
      expect(minted).toMatchObject({
        scope: 'inference',
        env: 'live',
        spend_limit_usd: 2.5,
        disabled: false,
      });
      expect(response.body.access_token.startsWith(minted.prefix)).toBe(true);
      const ownerKeys = await api().call('/v1/keys', { key: flow.owner.provisioningKey });
      expect(ownerKeys.body.data.map((key: { name: string }) => key.name)).not.toContain('Acme Notes');
    });

    it('the token makes a chat call (200) and gets 403 wrong_key_scope on GET /v1/keys', async () => {
      const flow = await approvedFlow(api());
      const { body } = await redeem(api(), flow);
      const chat = await api().chat(body.access_token);
      expect(chat.status, chat.text).toBe(200);
      expect(chat.body.choices[0].message.content.length).toBeGreaterThan(0);
      expectError(await api().call('/v1/keys', { key: body.access_token }), 403, 'wrong_key_scope');
    });

    it('a confidential client may redeem with HTTP Basic, and with client_secret in a JSON body', async () => {
      const basic = await approvedFlow(api());
      const viaBasic = await api().token(
        {
          grant_type: 'authorization_code',
          code: basic.code,
          redirect_uri: REDIRECT_URI,
          code_verifier: basic.verifier,
        },
        { basic: [basic.client.client_id, basic.client.client_secret] },
      );
      expect(viaBasic.status, viaBasic.text).toBe(200);

      const post = await approvedFlow(api());
      const viaJson = await api().token(
        {
          grant_type: 'authorization_code',
          code: post.code,
          redirect_uri: REDIRECT_URI,
          code_verifier: post.verifier,
          client_id: post.client.client_id,
          client_secret: post.client.client_secret,
        },
        { as: 'json' },
      );
      expect(viaJson.status, viaJson.text).toBe(200);
      expect(viaJson.headers.get('cache-control')).toBe('no-store');
    });

    it('a wrong verifier → 400 invalid_grant; the code stays redeemable with the right one', async () => {
      const flow = await approvedFlow(api());
      expectOAuthError(
        await redeem(api(), flow, { code_verifier: pkcePair().verifier }),
        400,
        'invalid_grant',
      );
      expectOAuthError(await redeem(api(), flow, { code_verifier: 'short' }), 400, 'invalid_grant');
      expect((await redeem(api(), flow)).status).toBe(200);
    });

    it('another redirect_uri than the approved one (even one registered for the client) → 400 invalid_grant', async () => {
      const flow = await approvedFlow(api());
      expectOAuthError(await redeem(api(), flow, { redirect_uri: OTHER_REDIRECT_URI }), 400, 'invalid_grant');
      expectOAuthError(await redeem(api(), flow, { redirect_uri: `${REDIRECT_URI}/` }), 400, 'invalid_grant');
    });

    it('an expired code (10 minutes later) → 400 invalid_grant', async () => {
      const flow = await approvedFlow(api());
      api().clock.offsetMs = 10 * 60_000 + 1_000;
      try {
        const response = await redeem(api(), flow);
        expectOAuthError(response, 400, 'invalid_grant');
        expect(response.body.error_description).toMatch(/expired/);
      } finally {
        api().clock.reset();
      }
    });

    it('a code used twice → 400 invalid_grant, and the key of its first use is revoked (401 key_revoked)', async () => {
      const flow = await approvedFlow(api());
      const first = await redeem(api(), flow);
      expect(first.status).toBe(200);
      expect((await api().chat(first.body.access_token)).status).toBe(200);

      const replay = await redeem(api(), flow);
      expectOAuthError(replay, 400, 'invalid_grant');
      expect(replay.body.error_description).toMatch(/already used/);
      expectError(await api().chat(first.body.access_token), 401, 'key_revoked');
      const keys = await api().call('/v1/keys', { key: flow.approver.provisioningKey });
      const minted = keys.body.data.filter((key: { name: string }) => key.name === 'Acme Notes');
      expect(minted).toEqual([expect.objectContaining({ disabled: true, revoked: true })]);
    });

    it('two concurrent redemptions of one code mint exactly one key', async () => {
      const flow = await approvedFlow(api());
      const responses = await Promise.all([redeem(api(), flow), redeem(api(), flow)]);
      expect(responses.map((response) => response.status).sort()).toEqual([200, 400]);
      const keys = await api().call('/v1/keys', { key: flow.approver.provisioningKey });
      expect(keys.body.data.filter((key: { name: string }) => key.name === 'Acme Notes')).toHaveLength(1);
    });

    it('an unknown code, and a code approved for another client → 400 invalid_grant', async () => {
      const flow = await approvedFlow(api());
      expectOAuthError(await redeem(api(), flow, { code: 'x'.repeat(43) }), 400, 'invalid_grant');
      const other = await api().registerClient(flow.owner.provisioningKey, { name: 'Other app' });
      const asOther = { client_id: other.client_id, client_secret: other.client_secret };
      expectOAuthError(await redeem(api(), flow, asOther), 400, 'invalid_grant');
      expect((await redeem(api(), flow)).status).toBe(200);
    });

    it('a wrong client secret → 401 invalid_client with WWW-Authenticate, even though PKCE would verify', async () => {
      const flow = await approvedFlow(api());
      const response = await redeem(api(), flow, { client_secret: 'gw_cs_wrong' });
      expectOAuthError(response, 401, 'invalid_client');
      expect(response.headers.get('www-authenticate')).toBe('Basic realm="tollgate"');
      expect((await redeem(api(), flow)).status).toBe(200);
    });

    it.each(['code', 'redirect_uri', 'code_verifier', 'client_id'])(
      'without %s → 400 invalid_request',
      async (name) => {
        const flow = await approvedFlow(api());
        const params: Record<string, string> = {
          grant_type: 'authorization_code',
          code: flow.code,
          redirect_uri: REDIRECT_URI,
          client_id: flow.client.client_id,
          client_secret: flow.client.client_secret,
          code_verifier: flow.verifier,
        };
        delete params[name];
        expectOAuthError(await api().token(params), 400, 'invalid_request');
      },
    );

    it("a deleted client's codes can no longer be redeemed (401 invalid_client)", async () => {
      const flow = await approvedFlow(api());
      const deleted = await api().call(`/v1/oauth/clients/${flow.client.client_id}`, {
        method: 'DELETE',
        key: flow.owner.provisioningKey,
      });
      expect(deleted.status).toBe(200);
      expectOAuthError(await redeem(api(), flow), 401, 'invalid_client');
    });

    it('the database never holds the code, the verifier, the client secret or the token in clear', async () => {
      const flow = await approvedFlow(api());
      const { body } = await redeem(api(), flow);
      const raw = await api().opened.dump();
      for (const secret of [flow.code, flow.verifier, flow.client.client_secret, body.access_token]) {
        expect(raw.includes(secret)).toBe(false);
      }
      expect(raw.includes(flow.client.client_id)).toBe(true);
    });
  });
});
