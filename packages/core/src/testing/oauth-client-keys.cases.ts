import { describe, expect, it } from 'vitest';
import { newId } from '../ids.js';
import type { OAuthMintedKey } from '../storage/oauth.js';
import { newKeyInput } from './fixtures.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

/** The keys OAuth mints for a client: client credentials (expiring), and their revocation with the client. */
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

  describe('OAuth client keys', () => {
    it("mintClientCredentialsKey - an inference key of the client's account, expiring, minted for the client (raw)", async () => {
      const { account, client } = await newClient();
      const key = await mintedKey(account.id);

      const result = await ctx.storage.mintClientCredentialsKey({
        clientId: client.id,
        key,
        expiresAt: T0 + HOUR,
      });

      expect(result).toEqual({ outcome: 'minted', keyId: expect.stringMatching(/^key_[0-9a-z]+$/) });
      const keyId = (result as { keyId: string }).keyId;
      expect((await ctx.storage.findApiKeyByHash(key.hash))?.key).toMatchObject({
        id: keyId,
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
        `SELECT expires_at, oauth_client_id FROM api_keys WHERE id = ${sqlText(keyId)}`,
      );
      expect([toNumber(row.expires_at), row.oauth_client_id]).toEqual([T0 + HOUR, client.id]);
    });

    it('mintClientCredentialsKey - the same token minted twice, even at once, is one key', async () => {
      const { account, client } = await newClient();
      const key = await mintedKey(account.id);

      const results = await concurrently(ctx, 4, (storage) =>
        storage.mintClientCredentialsKey({ clientId: client.id, key, expiresAt: T0 + HOUR }),
      );

      expect(new Set(results.map((result) => JSON.stringify(result))).size).toBe(1);
      expect(results[0]?.outcome).toBe('minted');
      expect(await rawCount(ctx, 'api_keys')).toBe(1);
    });

    it('mintClientCredentialsKey - an unknown or deleted client gets no key', async () => {
      const { account, client } = await newClient();
      await ctx.storage.deleteOAuthClient(account.id, client.id);

      for (const clientId of [client.id, 'client_doesnotexist']) {
        expect(
          await ctx.storage.mintClientCredentialsKey({
            clientId,
            key: await mintedKey(account.id),
            expiresAt: T0 + HOUR,
          }),
        ).toEqual({ outcome: 'unknown_client' });
      }
      expect(await rawCount(ctx, 'api_keys')).toBe(0);
    });

    it("findClientCredentialsKey - the client's enabled key expiring last, if still valid then; never a code's key", async () => {
      const { account, client } = await newClient();
      const { client: other } = await newClient('other');
      const mint = async (clientId: string, expiresAt: number) => {
        const result = await ctx.storage.mintClientCredentialsKey({
          clientId,
          key: await mintedKey(account.id),
          expiresAt,
        });
        return (result as { keyId: string }).keyId;
      };
      expect(await ctx.storage.findClientCredentialsKey(client.id, T0)).toBeNull();
      await mint(client.id, T0 + HOUR);
      const later = await mint(client.id, T0 + 2 * HOUR);
      const paused = await mint(client.id, T0 + 3 * HOUR);
      await ctx.storage.updateApiKey(account.id, paused, { disabled: true });
      await mint(other.id, T0 + 4 * HOUR);
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

      expect(await ctx.storage.findClientCredentialsKey(client.id, T0 + HOUR)).toEqual({
        keyId: later,
        expiresAt: T0 + 2 * HOUR,
      });
      expect(await ctx.storage.findClientCredentialsKey(client.id, T0 + 2 * HOUR)).toBeNull();
    });

    it('deleteOAuthClient - revokes the keys of both grants, of any account, and no other key', async () => {
      const { account, client } = await newClient();
      const approver = await ctx.storage.createAccount({ name: 'approver' });
      const credentials = await ctx.storage.mintClientCredentialsKey({
        clientId: client.id,
        key: await mintedKey(account.id),
        expiresAt: T0 + HOUR,
      });
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

      const credentialsKey = await ctx.storage.getApiKey(
        account.id,
        (credentials as { keyId: string }).keyId,
      );
      const codeKey = await ctx.storage.getApiKey(approver.id, (redeemed as { keyId: string }).keyId);
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
          : storage.mintClientCredentialsKey({
              clientId: client.id,
              key: keys[i % keys.length]!,
              expiresAt: T0 + HOUR,
            }),
      );

      const left = await ctx.storage.listApiKeys(account.id);
      expect(left.filter((key) => !key.disabled || !key.revoked)).toEqual([]);
      expect(await ctx.storage.getOAuthClient(client.id)).toBeNull();
    });
  });
}
