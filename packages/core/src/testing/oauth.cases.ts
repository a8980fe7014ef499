import { describe, expect, it } from 'vitest';
import { newId } from '../ids.js';
import type { NewOAuthClient, NewOAuthCode, OAuthMintedKey } from '../storage/oauth.js';
import { newKeyInput } from './fixtures.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toBoolean, toNumber, toNumberOrNull } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;
const TEN_MINUTES = 10 * 60_000;
const hex = (char: string) => char.repeat(64);
/** Looks like what the gateway stores: the SHA-256 hex of a random code. */
const randomHex = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(32)), (byte) => byte.toString(16).padStart(2, '0')).join(
    '',
  );

export function oauthCases(ctx: ConformanceContext): void {
  const newAccount = (name = 'oauth') => ctx.storage.createAccount({ name });
  const clientInput = (accountId: string, overrides: Partial<NewOAuthClient> = {}): NewOAuthClient => ({
    id: newId('client'),
    accountId,
    name: 'Acme Notes',
    redirectUris: ['https://notes.example/callback', 'http://localhost:8080/cb?x=1'],
    secretHash: hex('a'),
    createdAt: T0,
    ...overrides,
  });
  const codeInput = (clientId: string, accountId: string, overrides: Partial<NewOAuthCode> = {}) => ({
    codeHash: randomHex(),
    clientId,
    accountId,
    redirectUri: 'https://notes.example/callback',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    spendLimitMicros: 2_500_000,
    createdAt: T0,
    expiresAt: T0 + TEN_MINUTES,
    ...overrides,
  });
  const mintedKey = async (accountId: string): Promise<OAuthMintedKey> => {
    const { input } = await newKeyInput(accountId);
    return { name: 'Acme Notes', env: input.env, hash: input.hash, prefix: input.prefix };
  };
  /** A client of one account and a live code for it, approved by another account. */
  const approvedCode = async (overrides: Partial<NewOAuthCode> = {}) => {
    const owner = await newAccount('owner');
    const approver = await newAccount('approver');
    const client = await ctx.storage.createOAuthClient(clientInput(owner.id));
    const code = codeInput(client.id, approver.id, overrides);
    await ctx.storage.createOAuthCode(code);
    return { owner, approver, client, code };
  };

  describe('OAuth clients', () => {
    it('createOAuthClient - stores the client as given, the redirect URIs in order and only the secret hash (raw)', async () => {
      const account = await newAccount();
      const input = clientInput(account.id);

      const created = await ctx.storage.createOAuthClient(input);

      expect(created).toEqual(input);
      const row = await rawOne(ctx, `SELECT * FROM oauth_clients WHERE id = ${sqlText(input.id)}`);
      expect({ ...row, created_at: toNumber(row.created_at) }).toEqual({
        id: input.id,
        account_id: account.id,
        name: 'Acme Notes',
        redirect_uris: JSON.stringify(input.redirectUris),
        secret_hash: hex('a'),
        created_at: T0,
      });
    });

    it('createOAuthClient - rejects an unknown account and a taken id (also of another account)', async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      const input = clientInput(account.id);
      await ctx.storage.createOAuthClient(input);

      await expect(ctx.storage.createOAuthClient(clientInput('acct_doesnotexist'))).rejects.toThrow();
      await expect(ctx.storage.createOAuthClient({ ...input, accountId: other.id })).rejects.toThrow();
      expect(await rawCount(ctx, 'oauth_clients')).toBe(1);
    });

    it('getOAuthClient - finds a client by id whatever its account; null for an unknown id', async () => {
      const account = await newAccount();
      const client = await ctx.storage.createOAuthClient(clientInput(account.id));

      expect(await ctx.storage.getOAuthClient(client.id)).toEqual(client);
      expect(await ctx.storage.getOAuthClient('client_doesnotexist')).toBeNull();
    });

    it("listOAuthClients - the account's clients oldest first (same millisecond: by id), not another's", async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      const late = await ctx.storage.createOAuthClient(
        clientInput(account.id, { id: 'client_a', createdAt: T0 + 5 }),
      );
      const tieB = await ctx.storage.createOAuthClient(
        clientInput(account.id, { id: 'client_c', createdAt: T0 }),
      );
      const tieA = await ctx.storage.createOAuthClient(
        clientInput(account.id, { id: 'client_b', createdAt: T0 }),
      );
      await ctx.storage.createOAuthClient(clientInput(other.id));

      expect(await ctx.storage.listOAuthClients(account.id)).toEqual([tieA, tieB, late]);
      expect(await ctx.storage.listOAuthClients('acct_doesnotexist')).toEqual([]);
    });

    it("deleteOAuthClient - deletes the client and its codes, revokes the keys it obtained (rows kept); false for another account's client or a second time", async () => {
      const { owner, approver, client, code } = await approvedCode();
      const redeemed = await ctx.storage.redeemOAuthCode({
        codeHash: code.codeHash,
        now: T0 + 1,
        key: await mintedKey(approver.id),
      });
      const pending = codeInput(client.id, approver.id);
      await ctx.storage.createOAuthCode(pending);

      expect(await ctx.storage.deleteOAuthClient(approver.id, client.id)).toBe(false);
      expect(await ctx.storage.getOAuthClient(client.id)).not.toBeNull();
      expect(await ctx.storage.deleteOAuthClient(owner.id, client.id)).toBe(true);
      expect(await ctx.storage.deleteOAuthClient(owner.id, client.id)).toBe(false);
      expect(await ctx.storage.deleteOAuthClient(owner.id, 'client_doesnotexist')).toBe(false);

      expect(await ctx.storage.getOAuthClient(client.id)).toBeNull();
      expect(await ctx.storage.getOAuthCode(pending.codeHash)).toBeNull();
      expect(await rawCount(ctx, 'oauth_codes')).toBe(0);
      expect(redeemed.outcome).toBe('redeemed');
      const keyId = (redeemed as { keyId: string }).keyId;
      expect(await ctx.storage.getApiKey(approver.id, keyId)).toMatchObject({
        disabled: true,
        revoked: true,
        oauthClientId: client.id,
      });
    });
  });

  describe('OAuth codes', () => {
    it('createOAuthCode - stores the code unused; getOAuthCode reads it back with numbers (raw too)', async () => {
      const { approver, client, code } = await approvedCode();

      expect(await ctx.storage.getOAuthCode(code.codeHash)).toEqual({ ...code, usedAt: null, keyId: null });
      const row = await rawOne(ctx, `SELECT * FROM oauth_codes WHERE code_hash = ${sqlText(code.codeHash)}`);
      expect({
        ...row,
        spend_limit_micros: toNumberOrNull(row.spend_limit_micros),
        created_at: toNumber(row.created_at),
        expires_at: toNumber(row.expires_at),
        used_at: toNumberOrNull(row.used_at),
      }).toEqual({
        code_hash: code.codeHash,
        client_id: client.id,
        account_id: approver.id,
        redirect_uri: code.redirectUri,
        code_challenge: code.codeChallenge,
        spend_limit_micros: 2_500_000,
        created_at: T0,
        expires_at: T0 + TEN_MINUTES,
        used_at: null,
        key_id: null,
      });
      expect(await ctx.storage.getOAuthCode(hex('0'))).toBeNull();
    });

    it('createOAuthCode - keeps a null spend limit; rejects an unknown client, an unknown account and a taken hash', async () => {
      const { approver, client, code } = await approvedCode();
      const unlimited = codeInput(client.id, approver.id, { spendLimitMicros: null });
      await ctx.storage.createOAuthCode(unlimited);

      expect((await ctx.storage.getOAuthCode(unlimited.codeHash))?.spendLimitMicros).toBeNull();
      await expect(
        ctx.storage.createOAuthCode(codeInput('client_doesnotexist', approver.id)),
      ).rejects.toThrow();
      await expect(ctx.storage.createOAuthCode(codeInput(client.id, 'acct_doesnotexist'))).rejects.toThrow();
      await expect(
        ctx.storage.createOAuthCode({ ...code, redirectUri: 'https://other.example/' }),
      ).rejects.toThrow();
      expect(await rawCount(ctx, 'oauth_codes')).toBe(2);
    });

    it("redeemOAuthCode - marks a live code used and mints an inference key of the code's account with its spend limit, in one go", async () => {
      const { approver, code } = await approvedCode();
      const key = await mintedKey(approver.id);

      const result = await ctx.storage.redeemOAuthCode({ codeHash: code.codeHash, now: T0 + 1_000, key });

      expect(result).toEqual({ outcome: 'redeemed', keyId: expect.stringMatching(/^key_[0-9a-z]+$/) });
      const keyId = (result as { keyId: string }).keyId;
      const found = await ctx.storage.findApiKeyByHash(key.hash);
      expect(found?.account.id).toBe(approver.id);
      expect(found?.key).toMatchObject({
        id: keyId,
        accountId: approver.id,
        projectId: null,
        name: 'Acme Notes',
        scope: 'inference',
        env: key.env,
        prefix: key.prefix,
        spendLimitMicros: 2_500_000,
        rateLimitRpm: null,
        spentMicros: 0,
        disabled: false,
        revoked: false,
        expiresAt: null,
        oauthClientId: code.clientId,
      });
      expect(await ctx.storage.getOAuthCode(code.codeHash)).toMatchObject({ usedAt: T0 + 1_000, keyId });
      const row = await rawOne(
        ctx,
        `SELECT used_at, key_id FROM oauth_codes WHERE code_hash = ${sqlText(code.codeHash)}`,
      );
      expect([toNumber(row.used_at), row.key_id]).toEqual([T0 + 1_000, keyId]);
    });

    it('redeemOAuthCode - a second redemption is a replay: nothing minted, the first key revoked (raw)', async () => {
      const { approver, code } = await approvedCode();
      const first = await ctx.storage.redeemOAuthCode({
        codeHash: code.codeHash,
        now: T0 + 1,
        key: await mintedKey(approver.id),
      });
      const keyId = (first as { keyId: string }).keyId;
      const second = await mintedKey(approver.id);

      expect(
        await ctx.storage.redeemOAuthCode({ codeHash: code.codeHash, now: T0 + 2, key: second }),
      ).toEqual({
        outcome: 'replayed',
        revokedKeyId: keyId,
      });
      expect(await ctx.storage.findApiKeyByHash(second.hash)).toBeNull();
      const row = await rawOne(ctx, `SELECT disabled, revoked FROM api_keys WHERE id = ${sqlText(keyId)}`);
      expect([toBoolean(row.disabled), toBoolean(row.revoked)]).toEqual([true, true]);
      expect(await rawCount(ctx, 'api_keys')).toBe(1);
      // Still a replay after the code has expired.
      expect(
        await ctx.storage.redeemOAuthCode({
          codeHash: code.codeHash,
          now: T0 + 2 * TEN_MINUTES,
          key: await mintedKey(approver.id),
        }),
      ).toEqual({ outcome: 'replayed', revokedKeyId: keyId });
    });

    it('redeemOAuthCode - an expired code (at expiresAt and after) changes nothing; an unknown hash is unknown', async () => {
      const { approver, code } = await approvedCode();

      for (const now of [T0 + TEN_MINUTES, T0 + TEN_MINUTES + 1]) {
        expect(
          await ctx.storage.redeemOAuthCode({
            codeHash: code.codeHash,
            now,
            key: await mintedKey(approver.id),
          }),
        ).toEqual({
          outcome: 'expired',
        });
      }
      expect(
        await ctx.storage.redeemOAuthCode({ codeHash: hex('0'), now: T0, key: await mintedKey(approver.id) }),
      ).toEqual({
        outcome: 'unknown',
      });
      expect(await ctx.storage.getOAuthCode(code.codeHash)).toMatchObject({ usedAt: null, keyId: null });
      expect(await rawCount(ctx, 'api_keys')).toBe(0);
    });

    it('redeemOAuthCode - of concurrent redemptions of one code exactly one mints a key; the others are replays', async () => {
      const { approver, code } = await approvedCode();
      const keys = await Promise.all(Array.from({ length: 6 }, () => mintedKey(approver.id)));

      const results = await concurrently(ctx, keys.length, (storage, i) =>
        storage.redeemOAuthCode({ codeHash: code.codeHash, now: T0 + 1, key: keys[i]! }),
      );

      const redeemed = results.filter((result) => result.outcome === 'redeemed');
      expect(redeemed).toHaveLength(1);
      const keyId = (redeemed[0] as { keyId: string }).keyId;
      expect(results.filter((result) => result.outcome === 'replayed')).toHaveLength(keys.length - 1);
      for (const result of results)
        if (result.outcome === 'replayed') expect(result.revokedKeyId).toBe(keyId);
      expect(await rawCount(ctx, 'api_keys')).toBe(1);
      expect((await ctx.storage.getOAuthCode(code.codeHash))?.keyId).toBe(keyId);
    });

    it('sweepExpired - deletes codes with expiresAt <= now, used or not, and counts them', async () => {
      const { approver, client, code } = await approvedCode({ expiresAt: T0 + 100 });
      await ctx.storage.redeemOAuthCode({
        codeHash: code.codeHash,
        now: T0 + 1,
        key: await mintedKey(approver.id),
      });
      const unused = codeInput(client.id, approver.id, { expiresAt: T0 + 200 });
      const live = codeInput(client.id, approver.id, { expiresAt: T0 + 201 });
      await ctx.storage.createOAuthCode(unused);
      await ctx.storage.createOAuthCode(live);

      expect(await ctx.storage.sweepExpired(T0 + 200)).toBe(2);

      expect(await ctx.storage.getOAuthCode(code.codeHash)).toBeNull();
      expect(await ctx.storage.getOAuthCode(unused.codeHash)).toBeNull();
      expect(await ctx.storage.getOAuthCode(live.codeHash)).not.toBeNull();
      expect(await rawCount(ctx, 'api_keys')).toBe(1);
    });
  });
}
