import { buildCatalogue, createGateway, parseGatewayConfig, type Storage, systemClock } from '@tollgate/core';
import { createTestGateway } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { demoOnlyConfig } from '../helpers/demo-config.js';
import { expectError } from '../helpers/http.js';
import { silentLogger } from '../helpers/start-e2e-gateway.js';
import { inputOf } from '../helpers/test-config.js';
import {
  describeOAuthApi,
  expectOAuthError,
  type OAuthApi,
  pkcePair,
  REDIRECT_URI,
  type RegisteredClient,
} from './oauth-gateway.js';

/*
 * OAuth without footguns (product.md, "Money and safety, made precise" → OAuth), in-process: no
 * token for a suspended account, client-credentials tokens that expire and are not minted anew on
 * every call, a client's keys revoked with it, a client secret required for codes too, redirect URIs
 * that cannot point at someone else, and metadata whose issuer no request can choose.
 */

const clientCredentials = { grant_type: 'client_credentials' };
const HOUR_MS = 3_600_000;

async function ownerWithClient(api: OAuthApi) {
  const owner = await api.newTenant({ name: 'client owner' });
  const client = await api.registerClient(owner.provisioningKey, { name: 'Nightly batch' });
  const basic: [string, string] = [client.client_id, client.client_secret];
  return { owner, client, basic };
}

/** A code for `client`, approved by `approverKey`, and the form that redeems it with the client's secret. */
async function approvedCode(api: OAuthApi, client: RegisteredClient, approverKey: string) {
  const { verifier, challenge } = pkcePair();
  const approval = await api.authorize(approverKey, {
    client_id: client.client_id,
    redirect_uri: REDIRECT_URI,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  expect(approval.status, approval.text).toBe(200);
  const params = {
    grant_type: 'authorization_code',
    code: approval.body.code as string,
    redirect_uri: REDIRECT_URI,
    code_verifier: verifier,
  };
  return { params, basic: [client.client_id, client.client_secret] as [string, string] };
}

/** Runs `fn` with the gateway's clock `offsetMs` ahead of real time, then puts it back. */
async function later<T>(api: OAuthApi, offsetMs: number, fn: () => Promise<T>): Promise<T> {
  api.clock.offsetMs = offsetMs;
  try {
    return await fn();
  } finally {
    api.clock.reset();
  }
}

describeOAuthApi('OAuth hardening', (api) => {
  describe('a suspended account gets no token', () => {
    it('client_credentials → 400 unauthorized_client while the registering account is suspended', async () => {
      const { owner, basic } = await ownerWithClient(api());
      await api().storage.setAccountSuspended(owner.account.id, true);
      const refused = await api().token(clientCredentials, { basic });
      expectOAuthError(refused, 400, 'unauthorized_client');
      expect((await api().storage.listApiKeys(owner.account.id)).map((key) => key.name)).not.toContain(
        'Nightly batch',
      );
      await api().storage.setAccountSuspended(owner.account.id, false);
      expect((await api().token(clientCredentials, { basic })).status).toBe(200);
    });

    it('authorization_code → 400 invalid_grant while the approving account is suspended; the code survives', async () => {
      const { client } = await ownerWithClient(api());
      const approver = await api().newTenant({ name: 'approver' });
      const { params, basic } = await approvedCode(api(), client, approver.provisioningKey);
      await api().storage.setAccountSuspended(approver.account.id, true);
      expectOAuthError(await api().token(params, { basic }), 400, 'invalid_grant');
      await api().storage.setAccountSuspended(approver.account.id, false);
      expect((await api().token(params, { basic })).status).toBe(200);
    });
  });

  describe('client_credentials tokens', () => {
    it('expire: expires_in 3600, and an hour later the token answers 401 key_revoked', async () => {
      const { basic } = await ownerWithClient(api());
      const granted = await api().token(clientCredentials, { basic });
      expect(granted.body.expires_in).toBe(3600);
      const token = granted.body.access_token as string;
      expect((await api().chat(token)).status).toBe(200);
      const expired = await later(api(), HOUR_MS, () => api().chat(token));
      expectError(expired, 401, 'key_revoked');
      expect(expired.body.error.message).toMatch(/expired/);
    });

    it('50 calls within the hour hand out one token and one key, not 50', async () => {
      const { owner, basic } = await ownerWithClient(api());
      const tokens = new Set<string>();
      for (let i = 0; i < 50; i++) {
        const granted = await api().token(clientCredentials, { basic });
        expect(granted.status, granted.text).toBe(200);
        expect(granted.body.expires_in).toBeGreaterThan(1_800);
        tokens.add(granted.body.access_token);
      }
      expect(tokens.size).toBe(1);
      const minted = (await api().storage.listApiKeys(owner.account.id)).filter(
        (key) => key.name === 'Nightly batch',
      );
      expect(minted).toHaveLength(1);
      expect(minted[0]!.expiresAt).not.toBeNull();
    });

    it('50 calls at once also share one token and one key', async () => {
      const { owner, basic } = await ownerWithClient(api());
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => api().token(clientCredentials, { basic })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
      expect(new Set(answers.map((answer) => answer.body.access_token)).size).toBe(1);
      const minted = (await api().storage.listApiKeys(owner.account.id)).filter(
        (key) => key.name === 'Nightly batch',
      );
      expect(minted).toHaveLength(1);
    });

    it('past half its life a token is replaced: a new key, a full lifetime, the old one still valid until it expires', async () => {
      const { owner, basic } = await ownerWithClient(api());
      const first = (await api().token(clientCredentials, { basic })).body;
      const second = await later(api(), HOUR_MS / 2 + 1_000, async () => {
        const granted = (await api().token(clientCredentials, { basic })).body;
        expect((await api().chat(first.access_token)).status).toBe(200);
        return granted;
      });
      expect(second.access_token).not.toBe(first.access_token);
      expect(second.expires_in).toBe(3600);
      const keys = await api().storage.listApiKeys(owner.account.id);
      expect(keys.filter((key) => key.name === 'Nightly batch')).toHaveLength(2);
    });

    it('a revoked token is not handed out again: the next call mints a new one', async () => {
      const { owner, basic } = await ownerWithClient(api());
      const first = (await api().token(clientCredentials, { basic })).body.access_token as string;
      const keyId = (await api().call('/v1/key', { key: first })).body.data.id as string;
      await api().call(`/v1/keys/${keyId}`, { method: 'DELETE', key: owner.provisioningKey });
      const second = (await api().token(clientCredentials, { basic })).body.access_token as string;
      expect(second).not.toBe(first);
      expect((await api().chat(second)).status).toBe(200);
      expectError(await api().chat(first), 401, 'key_revoked');
    });

    it('live as long as the gateway is told (oauth.clientCredentialsTtlS)', async () => {
      const { basic } = await ownerWithClient(api());
      const shortLived = await createTestGateway(inputOf(demoOnlyConfig), {
        storage: api().storage,
        clock: systemClock,
        gateway: { oauth: { clientCredentialsTtlS: 120 } },
      });
      const response = await shortLived.fetch(
        new Request('http://gateway.test/v1/oauth/token', {
          method: 'POST',
          headers: {
            authorization: `Basic ${btoa(`${basic[0]}:${basic[1]}`)}`,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: 'grant_type=client_credentials',
        }),
      );
      expect((await response.json()).expires_in).toBe(120);
      await shortLived.close();
    });
  });

  it('deleting a client revokes every key it obtained: both grants, whichever account approved', async () => {
    const { owner, client, basic } = await ownerWithClient(api());
    const approver = await api().newTenant({ name: 'approver' });
    const code = await approvedCode(api(), client, approver.provisioningKey);
    const viaCode = (await api().token(code.params, { basic: code.basic })).body.access_token as string;
    const viaCredentials = (await api().token(clientCredentials, { basic })).body.access_token as string;
    for (const token of [viaCode, viaCredentials]) expect((await api().chat(token)).status).toBe(200);

    const deleted = await api().call(`/v1/oauth/clients/${client.client_id}`, {
      method: 'DELETE',
      key: owner.provisioningKey,
    });
    expect(deleted.status).toBe(200);

    for (const token of [viaCode, viaCredentials]) expectError(await api().chat(token), 401, 'key_revoked');
    expect((await api().call('/v1/key', { key: owner.inferenceKey })).status).toBe(200);
    expect((await api().call('/v1/key', { key: approver.inferenceKey })).status).toBe(200);
  });

  it('a client that was issued a secret must send it to redeem a code (401 invalid_client), RFC 6749 §4.1.3', async () => {
    const { client } = await ownerWithClient(api());
    const { params, basic } = await approvedCode(api(), client, (await api().newTenant()).provisioningKey);
    const withoutSecret = await api().token({ ...params, client_id: client.client_id });
    expectOAuthError(withoutSecret, 401, 'invalid_client');
    expect(withoutSecret.body.error_description).toMatch(/secret/);
    expect((await api().token(params, { basic })).status).toBe(200);
  });

  describe('registered redirect URIs are https, or http on a loopback host, without userinfo or fragment', () => {
    it.each([
      'http://evil.example/cb',
      'http://localhost.evil.example/cb',
      'http://127.0.0.1.nip.io/cb',
      'http://10.0.0.1/cb',
      'https://user:pw@app.example/cb',
      'https://user@app.example/cb',
      'https://@app.example/cb',
      'http://user@127.0.0.1/cb',
      'https://app.example/cb#',
      'https://app.example/cb#x',
      'https://app.example/c\u00a0b',
      'https://app.example/c\u2028b',
      'javascript:alert(1)',
      'com.example.app:/cb',
    ])('%s → 400 invalid_request at registration', async (uri) => {
      const owner = await api().newTenant();
      const response = await api().call('/v1/oauth/clients', {
        key: owner.provisioningKey,
        json: { name: 'App', redirect_uris: [REDIRECT_URI, uri] },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain('body.redirect_uris.1');
      expect(await api().storage.listOAuthClients(owner.account.id)).toEqual([]);
    });

    it.each([
      'https://app.example/cb?x=1',
      'http://127.0.0.1:8080/cb',
      'http://[::1]:9000/cb',
      'http://localhost/cb',
      'http://LOCALHOST:3000/cb',
    ])('%s is accepted', async (uri) => {
      const owner = await api().newTenant();
      const client = await api().registerClient(owner.provisioningKey, { redirect_uris: [uri] });
      expect(client.redirect_uris).toEqual([uri]);
    });
  });

  it("the metadata's issuer is the public URL whatever Host the request names", async () => {
    for (const origin of ['http://gateway.test', 'https://evil.example', 'http://127.0.0.1:1']) {
      const response = await api().gateway.fetch(
        new Request(`${origin}/.well-known/oauth-authorization-server`),
      );
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        issuer: 'http://gateway.test',
        authorization_endpoint: 'http://gateway.test/dashboard/authorize',
        token_endpoint: 'http://gateway.test/v1/oauth/token',
      });
    }
  });
});

describe('OAuth metadata without a public URL', () => {
  it('is not served (404 not_found naming public_url) rather than trusting the Host header', async () => {
    const catalogue = buildCatalogue(parseGatewayConfig({ providers: {}, models: [] }), {});
    const gateway = createGateway({} as Storage, catalogue, { logger: silentLogger });
    const response = await gateway.fetch(
      new Request('https://evil.example/.well-known/oauth-authorization-server'),
    );
    expectError(
      { status: response.status, headers: response.headers, body: await response.json(), text: '' },
      404,
      'not_found',
    );
    await gateway.close();
  });
});
