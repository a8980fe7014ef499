import { describe, expect, it } from 'vitest';
import { newId } from '../ids.js';
import type { OAuthMintedKey } from '../storage/oauth.js';
import { newKeyInput } from './fixtures.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

/** The keys OAuth mints for a client: client credentials (expiring, handed out again), revoked with it. */
export function oauthClientKeysCases(ctx: ConformanceContext): void {
  const newClient = async (name = 'owner') => {
    const account = await ctx.storage.createAccount({ name });
    const client = await ctx.storage.createOAuthClient({
      id: newId('client'),
      accountId: account.id,
      name: 'Acme Batch',
      redirectUris: ['https://batch.example/cb'],
      secretHash: 'a'.repeat(64),
      createdAt: T0,
    });
    return { account, client };
  };
  const mintedKey = async (accountId: string): Promise<OAuthMintedKey> => {
    const { input } = await newKeyInput(accountId);
    return { name: 'Acme Batch', env: input.env, hash: input.hash, prefix: input.prefix };
  };
  /** Issues at `now` a key for an hour, handing out again one valid for half of it. */
  const issue = async (clientId: string, accountId: string, now = T0) =>
    ctx.storage.issueClientCredentialsKey({
      clientId,
      validAt: now + HOUR / 2,
      expiresAt: now + HOUR,
      key: await mintedKey(accountId),
    });
  const keyIdOf = (result: object) => (result as { keyId: string }).keyId;

  describe('OAuth client keys', () => {
    it("issueClientCredentialsKey - mints an inference key of the client's account, expiring, minted for the client (raw)", async () => {
      const { account, client } = await newClient();
      const key = await mintedKey(account.id);

      const result = await ctx.storage.issueClientCredentialsKey({
        clientId: client.id,
        validAt: T0 + HOUR / 2,
        expiresAt: T0 + HOUR,
        key,
      });

      expect(result).toEqual({ outcome: 'minted', keyId: expect.stringMatching(/^key_[0-9a-z]+$/) });
      expect((await ctx.storage.findApiKeyByHash(key.hash))?.key).toMatchObject({
        id: keyIdOf(result),
        accountId: account.id,
        name: 'Acme Batch',
        scope: 'inference',
        spendLimitMicros: null,
        disabled: false,
        revoked: false,
        expiresAt: T0 + HOUR,
        oauthClientId: client.id,
      });
      const row = await rawOne(
        ctx,
        `SELECT expires_at, oauth_client_id FROM api_keys WHERE id = ${sqlText(keyIdOf(result))}`,
      );
      expect([toNumber(row.expires_at), row.oauth_client_id]).toEqual([T0 + HOUR, client.id]);
    });

    it('issueClientCredentialsKey - hands the live key out again until validAt passes its expiry, then mints', async () => {
      const { account, client } = await newClient();
      const first = await issue(client.id, account.id, T0);

      expect(await issue(client.id, account.id, T0 + HOUR / 2 - 1)).toEqual({
        outcome: 'existing',
        keyId: keyIdOf(first),
        expiresAt: T0 + HOUR,
      });
      const second = await issue(client.id, account.id, T0 + HOUR / 2);
      expect(second.outcome).toBe('minted');
      expect(await issue(client.id, account.id, T0 + HOUR / 2 + 1)).toEqual({
        outcome: 'existing',
        keyId: keyIdOf(second),
        expiresAt: T0 + HOUR / 2 + HOUR,
      });
      expect(await rawCount(ctx, 'api_keys')).toBe(2);
    });

    it("issueClientCredentialsKey - never hands out a paused or revoked key, another client's, or a code's", async () => {
      const { account, client } = await newClient();
      const { account: otherAccount, client: other } = await newClient('other');
      await issue(other.id, otherAccount.id);
      const paused = await issue(client.id, account.id);
      await ctx.storage.updateApiKey(account.id, keyIdOf(paused), { disabled: true });
      const revoked = await issue(client.id, account.id);
      await ctx.storage.revokeApiKey(account.id, keyIdOf(revoked));
      await ctx.storage.createOAuthCode({
        codeHash: 'c'.repeat(64),
        clientId: client.id,
        accountId: account.id,
        redirectUri: 'https://batch.example/cb',
        codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        spendLimitMicros: null,
        createdAt: T0,
        expiresAt: T0 + 600_000,
      });
      await ctx.storage.redeemOAuthCode({
        codeHash: 'c'.repeat(64),
        now: T0,
        key: await mintedKey(account.id),
      });

      expect((await issue(client.id, account.id)).outcome).toBe('minted');
    });

    it('issueClientCredentialsKey - of concurrent calls exactly one mints; the others get its key', async () => {
      const { account, client } = await newClient();
      const keys = await Promise.all(Array.from({ length: 6 }, () => mintedKey(account.id)));

      const results = await concurrently(ctx, keys.length, (storage, i) =>
        storage.issueClientCredentialsKey({
          clientId: client.id,
          validAt: T0 + HOUR / 2,
          expiresAt: T0 + HOUR + i,
          key: keys[i]!,
        }),
      );

      const minted = results.filter((result) => result.outcome === 'minted');
      expect(minted).toHaveLength(1);
      for (const result of results) expect(keyIdOf(result)).toBe(keyIdOf(minted[0]!));
      expect(await rawCount(ctx, 'api_keys')).toBe(1);
    });

    it('issueClientCredentialsKey - an unknown or deleted client gets no key', async () => {
      const { account, client } = await newClient();
      await ctx.storage.deleteOAuthClient(account.id, client.id);

      for (const clientId of [client.id, 'client_doesnotexist']) {
        expect(await issue(clientId, account.id)).toEqual({ outcome: 'unknown_client' });
      }
      expect(await rawCount(ctx, 'api_keys')).toBe(0);
    });

    it('deleteOAuthClient - revokes the keys of both grants, of any account, and no other key', async () => {
      const { account, client } = await newClient();
      const approver = await ctx.storage.createAccount({ name: 'approver' });
      const credentials = await issue(client.id, account.id);
      await ctx.storage.createOAuthCode({
        codeHash: 'd'.repeat(64),
        clientId: client.id,
        accountId: approver.id,
        redirectUri: 'https://batch.example/cb',
        codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        spendLimitMicros: null,
        createdAt: T0,
        expiresAt: T0 + 600_000,
      });
      const redeemed = await ctx.storage.redeemOAuthCode({
        codeHash: 'd'.repeat(64),
        now: T0,
        key: await mintedKey(approver.id),
      });
      const unrelated = await ctx.storage.createApiKey((await newKeyInput(account.id)).input);

      expect(await ctx.storage.deleteOAuthClient(account.id, client.id)).toBe(true);

      const credentialsKey = await ctx.storage.getApiKey(account.id, keyIdOf(credentials));
      const codeKey = await ctx.storage.getApiKey(approver.id, keyIdOf(redeemed));
      for (const key of [credentialsKey, codeKey])
        expect(key).toMatchObject({ revoked: true, disabled: true });
      expect(await ctx.storage.getApiKey(account.id, unrelated.id)).toEqual(unrelated);
      expect(await rawCount(ctx, 'api_keys')).toBe(3);
    });

    it('deleteOAuthClient - racing client-credentials grants: no key of the client is left enabled', async () => {
      const { account, client } = await newClient();
      const keys = await Promise.all(Array.from({ length: 6 }, () => mintedKey(account.id)));

      await concurrently<unknown>(ctx, keys.length + 1, (storage, i) =>
        i === 3
          ? storage.deleteOAuthClient(account.id, client.id)
          : storage.issueClientCredentialsKey({
              clientId: client.id,
              validAt: T0 + HOUR / 2,
              expiresAt: T0 + HOUR,
              key: keys[i % keys.length]!,
            }),
      );

      const left = await ctx.storage.listApiKeys(account.id);
      expect(left.filter((key) => !key.disabled || !key.revoked)).toEqual([]);
      expect(await ctx.storage.getOAuthClient(client.id)).toBeNull();
    });
  });
}
