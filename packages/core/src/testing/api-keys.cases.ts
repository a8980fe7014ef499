import { describe, expect, it } from 'vitest';
import { expectRecentEpochMs, ID_PATTERN, newKeyInput, nextMillisecond } from './fixtures.js';
import { rawCount, rawOne, sqlText, toBoolean, toNumber, toNumberOrNull } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

export function apiKeysCases(ctx: ConformanceContext): void {
  const rawKeyRow = (id: string) => rawOne(ctx, `SELECT * FROM api_keys WHERE id = ${sqlText(id)}`);

  describe('api keys', () => {
    it('createApiKey - stores a key_ row with defaults and getApiKey returns it', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const { input } = await newKeyInput(account.id, { name: 'ci' });
      const key = await ctx.storage.createApiKey(input);

      expect(key).toEqual({
        id: expect.stringMatching(ID_PATTERN.key),
        accountId: account.id,
        projectId: null,
        name: 'ci',
        scope: 'inference',
        env: 'live',
        prefix: input.prefix,
        spendLimitMicros: null,
        limitReset: null,
        rateLimitRpm: null,
        spentMicros: 0,
        disabled: false,
        revoked: false,
        expiresAt: null,
        oauthClientId: null,
        createdAt: expect.any(Number),
      });
      expect(expectRecentEpochMs(key.createdAt)).toBe(true);
      expect(await ctx.storage.getApiKey(account.id, key.id)).toEqual(key);
    });

    it('createApiKey - round-trips project, scope, env and limits', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const project = await ctx.storage.createProject({ accountId: account.id, name: 'web' });
      const { input } = await newKeyInput(account.id, {
        env: 'test',
        scope: 'provisioning',
        projectId: project.id,
        spendLimitMicros: 7_000_000_000,
        rateLimitRpm: 30,
      });
      const key = await ctx.storage.createApiKey(input);

      expect(key).toMatchObject({
        projectId: project.id,
        scope: 'provisioning',
        env: 'test',
        spendLimitMicros: 7_000_000_000,
        rateLimitRpm: 30,
      });
      expect(await ctx.storage.getApiKey(account.id, key.id)).toEqual(key);
      const row = await rawKeyRow(key.id);
      expect(row.project_id).toBe(project.id);
      expect(toNumber(row.spend_limit_micros)).toBe(7_000_000_000);
      expect(toNumber(row.rate_limit_rpm)).toBe(30);
      expect(toNumber(row.spent_micros)).toBe(0);
    });

    it('the api_keys row holds the hash and prefix, and no column holds the key itself', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const { key: secretKey, input } = await newKeyInput(account.id);
      const key = await ctx.storage.createApiKey(input);

      const row = await rawKeyRow(key.id);
      expect(row.key_hash).toBe(input.hash);
      expect(row.prefix).toBe(input.prefix);
      const secretPart = secretKey.slice('gw_live_'.length);
      for (const [column, value] of Object.entries(row)) {
        const text = value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : String(value);
        expect(text, `api_keys.${column}`).not.toContain(secretKey);
        expect(text, `api_keys.${column}`).not.toContain(secretPart);
      }
    });

    it('listApiKeys - lists the account keys oldest first, disabled ones included', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const other = await ctx.storage.createAccount({ name: 'other' });
      await ctx.storage.createApiKey((await newKeyInput(other.id, { name: 'not mine' })).input);
      const created = [];
      for (const name of ['first', 'second', 'third']) {
        created.push(await ctx.storage.createApiKey((await newKeyInput(account.id, { name })).input));
        await nextMillisecond();
      }
      const disabled = await ctx.storage.updateApiKey(account.id, created[1]!.id, { disabled: true });

      expect(await ctx.storage.listApiKeys(account.id)).toEqual([created[0], disabled, created[2]]);
    });

    it('listApiKeys - returns an empty list for an account without keys', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      expect(await ctx.storage.listApiKeys(account.id)).toEqual([]);
    });

    it('findApiKeyByHash - returns the key, its account and its count of BYOK keys in one result', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme', defaultRpm: 90 });
      const { input } = await newKeyInput(account.id);
      const key = await ctx.storage.createApiKey(input);

      expect(await ctx.storage.findApiKeyByHash(input.hash)).toEqual({
        key,
        account,
        byokKeys: 0,
        guardrails: 0,
      });
    });

    it('findApiKeyById - the same result as findApiKeyByHash, scoped to the account (another account or an unknown id: null)', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme', defaultRpm: 90 });
      const other = await ctx.storage.createAccount({ name: 'Other' });
      const { input } = await newKeyInput(account.id);
      const key = await ctx.storage.createApiKey(input);

      expect(await ctx.storage.findApiKeyById(account.id, key.id)).toEqual(
        await ctx.storage.findApiKeyByHash(input.hash),
      );
      expect(await ctx.storage.findApiKeyById(other.id, key.id)).toBeNull();
      expect(await ctx.storage.findApiKeyById(account.id, 'key_unknown')).toBeNull();
    });

    it('findApiKeyByHash - also returns a disabled key of a suspended account', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const { input } = await newKeyInput(account.id);
      const key = await ctx.storage.createApiKey(input);
      await ctx.storage.updateApiKey(account.id, key.id, { disabled: true });
      await ctx.storage.setAccountSuspended(account.id, true);

      const found = await ctx.storage.findApiKeyByHash(input.hash);
      expect(found?.key).toEqual({ ...key, disabled: true });
      expect(found?.account).toEqual({ ...account, suspended: true });
    });

    it('findApiKeyByHash - returns null for an unknown hash', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      await ctx.storage.createApiKey((await newKeyInput(account.id)).input);
      const { input: unknown } = await newKeyInput(account.id);
      expect(await ctx.storage.findApiKeyByHash(unknown.hash)).toBeNull();
    });

    it('createApiKey - rejects a hash that is already taken, also by another account', async () => {
      const first = await ctx.storage.createAccount({ name: 'first' });
      const second = await ctx.storage.createAccount({ name: 'second' });
      const { input } = await newKeyInput(first.id);
      await ctx.storage.createApiKey(input);

      await expect(ctx.storage.createApiKey({ ...input, name: 'again' })).rejects.toThrow();
      await expect(ctx.storage.createApiKey({ ...input, accountId: second.id })).rejects.toThrow();
      expect(await rawCount(ctx, 'api_keys', `key_hash = ${sqlText(input.hash)}`)).toBe(1);
    });

    it("createApiKey - rejects another account's project and writes nothing", async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const other = await ctx.storage.createAccount({ name: 'other' });
      const foreign = await ctx.storage.createProject({ accountId: other.id, name: 'theirs' });

      const { input } = await newKeyInput(account.id, { projectId: foreign.id });
      await expect(ctx.storage.createApiKey(input)).rejects.toThrow();
      const { input: unknown } = await newKeyInput(account.id, { projectId: 'proj_doesnotexist' });
      await expect(ctx.storage.createApiKey(unknown)).rejects.toThrow();
      expect(await rawCount(ctx, 'api_keys')).toBe(0);
    });

    it('createApiKey - rejects a missing account and writes nothing', async () => {
      const { input } = await newKeyInput('acct_doesnotexist');
      await expect(ctx.storage.createApiKey(input)).rejects.toThrow();
      expect(await rawCount(ctx, 'api_keys')).toBe(0);
    });

    it("getApiKey and updateApiKey - return null for another account's key and change nothing", async () => {
      const owner = await ctx.storage.createAccount({ name: 'owner' });
      const intruder = await ctx.storage.createAccount({ name: 'intruder' });
      const key = await ctx.storage.createApiKey(
        (await newKeyInput(owner.id, { name: 'kept', spendLimitMicros: 1_000_000 })).input,
      );
      const before = await rawKeyRow(key.id);

      expect(await ctx.storage.getApiKey(intruder.id, key.id)).toBeNull();
      const patch = { name: 'stolen', spendLimitMicros: null, rateLimitRpm: 1, disabled: true };
      expect(await ctx.storage.updateApiKey(intruder.id, key.id, patch)).toBeNull();

      expect(await rawKeyRow(key.id)).toEqual(before);
      expect(await ctx.storage.getApiKey(owner.id, key.id)).toEqual(key);
    });

    it('getApiKey and updateApiKey - return null for an unknown key id', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      expect(await ctx.storage.getApiKey(account.id, 'key_doesnotexist')).toBeNull();
      expect(await ctx.storage.updateApiKey(account.id, 'key_doesnotexist', { name: 'x' })).toBeNull();
      expect(await rawCount(ctx, 'api_keys')).toBe(0);
    });

    it('updateApiKey - undefined leaves a field as is, an empty patch changes nothing', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const key = await ctx.storage.createApiKey(
        (await newKeyInput(account.id, { name: 'a', spendLimitMicros: 5_000_000, rateLimitRpm: 60 })).input,
      );

      expect(await ctx.storage.updateApiKey(account.id, key.id, {})).toEqual(key);
      const patch = {
        name: undefined,
        spendLimitMicros: undefined,
        rateLimitRpm: undefined,
        disabled: undefined,
      };
      expect(await ctx.storage.updateApiKey(account.id, key.id, patch)).toEqual(key);

      const renamed = await ctx.storage.updateApiKey(account.id, key.id, { name: 'b' });
      expect(renamed).toEqual({ ...key, name: 'b' });
      expect(await ctx.storage.getApiKey(account.id, key.id)).toEqual({ ...key, name: 'b' });
    });

    it('updateApiKey - null clears a limit, a number sets it, each independently', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const key = await ctx.storage.createApiKey(
        (await newKeyInput(account.id, { spendLimitMicros: 5_000_000, rateLimitRpm: 60 })).input,
      );

      const noCap = await ctx.storage.updateApiKey(account.id, key.id, { spendLimitMicros: null });
      expect(noCap).toEqual({ ...key, spendLimitMicros: null });
      const noRpm = await ctx.storage.updateApiKey(account.id, key.id, { rateLimitRpm: null });
      expect(noRpm).toEqual({ ...key, spendLimitMicros: null, rateLimitRpm: null });
      let row = await rawKeyRow(key.id);
      expect(toNumberOrNull(row.spend_limit_micros)).toBeNull();
      expect(toNumberOrNull(row.rate_limit_rpm)).toBeNull();

      const capped = await ctx.storage.updateApiKey(account.id, key.id, {
        spendLimitMicros: 9_000_000_000,
        rateLimitRpm: 5,
      });
      expect(capped).toEqual({ ...key, spendLimitMicros: 9_000_000_000, rateLimitRpm: 5 });
      row = await rawKeyRow(key.id);
      expect(toNumber(row.spend_limit_micros)).toBe(9_000_000_000);
      expect(toNumber(row.rate_limit_rpm)).toBe(5);
    });

    it('updateApiKey - disables and re-enables a key', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const key = await ctx.storage.createApiKey((await newKeyInput(account.id)).input);
      const rawDisabled = async () => toBoolean((await rawKeyRow(key.id)).disabled);

      expect(await ctx.storage.updateApiKey(account.id, key.id, { disabled: true })).toEqual({
        ...key,
        disabled: true,
      });
      expect(await rawDisabled()).toBe(true);
      expect(await ctx.storage.updateApiKey(account.id, key.id, { disabled: false })).toEqual(key);
      expect(await rawDisabled()).toBe(false);
    });
  });
}
