import { describe, expect, it } from 'vitest';
import { newKeyInput } from './fixtures.js';
import { concurrently } from './metering-fixtures.js';
import { rawOne, sqlText, toBoolean } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

export function keyRevocationCases(ctx: ConformanceContext): void {
  const rawFlags = async (id: string) => {
    const row = await rawOne(ctx, `SELECT disabled, revoked FROM api_keys WHERE id = ${sqlText(id)}`);
    return { disabled: toBoolean(row.disabled), revoked: toBoolean(row.revoked) };
  };
  const newKey = async () => {
    const account = await ctx.storage.createAccount({ name: 'Acme' });
    const { input } = await newKeyInput(account.id, { name: 'ci', spendLimitMicros: 5_000_000 });
    return { account, input, key: await ctx.storage.createApiKey(input) };
  };

  describe('api keys: revocation', () => {
    it('revokeApiKey - sets revoked and disabled, keeps the row; a second call changes nothing', async () => {
      const { account, input, key } = await newKey();

      const revoked = await ctx.storage.revokeApiKey(account.id, key.id);

      expect(revoked).toEqual({ ...key, disabled: true, revoked: true });
      expect(await rawFlags(key.id)).toEqual({ disabled: true, revoked: true });
      expect((await ctx.storage.findApiKeyByHash(input.hash))?.key).toEqual(revoked);
      expect(await ctx.storage.listApiKeys(account.id)).toEqual([revoked]);
      expect(await ctx.storage.revokeApiKey(account.id, key.id)).toEqual(revoked);
    });

    it('getApiKeyById - finds a key by id alone, whatever its account; null for an unknown id', async () => {
      const { key } = await newKey();

      expect(await ctx.storage.getApiKeyById(key.id)).toEqual(key);
      expect(await ctx.storage.getApiKeyById('key_doesnotexist')).toBeNull();
    });

    it("revokeApiKey - null for another account's key or an unknown id, which stay as they were", async () => {
      const { key } = await newKey();
      const intruder = await ctx.storage.createAccount({ name: 'intruder' });

      expect(await ctx.storage.revokeApiKey(intruder.id, key.id)).toBeNull();
      expect(await ctx.storage.revokeApiKey(intruder.id, 'key_doesnotexist')).toBeNull();
      expect(await rawFlags(key.id)).toEqual({ disabled: false, revoked: false });
    });

    it('updateApiKey - disabled: false leaves a revoked key disabled, while the other fields of the patch apply', async () => {
      const { account, key } = await newKey();
      await ctx.storage.revokeApiKey(account.id, key.id);

      const patched = await ctx.storage.updateApiKey(account.id, key.id, {
        disabled: false,
        name: 'renamed',
        spendLimitMicros: null,
      });

      expect(patched).toEqual({
        ...key,
        name: 'renamed',
        spendLimitMicros: null,
        disabled: true,
        revoked: true,
      });
      expect(await rawFlags(key.id)).toEqual({ disabled: true, revoked: true });
      expect(await ctx.storage.updateApiKey(account.id, key.id, { disabled: false })).toEqual(patched);
    });

    it('updateApiKey - enabling races revoking: the key ends revoked and disabled whatever the order', async () => {
      const { account, key } = await newKey();
      await ctx.storage.updateApiKey(account.id, key.id, { disabled: true });

      await concurrently<unknown>(ctx, 8, (storage, i) =>
        i === 3
          ? storage.revokeApiKey(account.id, key.id)
          : storage.updateApiKey(account.id, key.id, { disabled: false }),
      );
      await ctx.storage.updateApiKey(account.id, key.id, { disabled: false });

      expect(await rawFlags(key.id)).toEqual({ disabled: true, revoked: true });
    });
  });
}
