import { describe, expect, it } from 'vitest';
import { newId } from '../ids.js';
import type { NewByokKey } from '../storage/account-features.js';
import { expectRecentEpochMs, newKeyInput, nextMillisecond } from './fixtures.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toBoolean, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;

/** Looks like what the gateway seals (AES-256-GCM, base64url); storage must treat it as opaque. */
const SEALED = 'v1.q2Vx9Lr0dZ3mK8pA.3fJ0nT8r-w_Yc1bE6uQzH2sLkV9aXoP4iGd7MeNf5Uh';

export function accountFeaturesCases(ctx: ConformanceContext): void {
  const byokInput = (accountId: string, overrides: Partial<NewByokKey> = {}): NewByokKey => ({
    id: newId('byok'),
    accountId,
    provider: 'openai',
    label: 'production',
    allowFallback: true,
    sealedKey: SEALED,
    ...overrides,
  });
  const newAccount = (name = 'features') => ctx.storage.createAccount({ name });
  const presetInput = (accountId: string, name: string, now = T0) => ({
    accountId,
    name,
    description: 'Fast and cheap',
    config: { models: ['openai/gpt-4o-mini'], temperature: 0.2, provider: { sort: 'price' } },
    now,
  });

  describe('BYOK keys', () => {
    it('createByokKey - stores the key as given, the sealed key byte for byte and nothing else (raw)', async () => {
      const account = await newAccount();
      const input = byokInput(account.id, { label: null, allowFallback: false });

      const created = await ctx.storage.createByokKey(input);

      expect(created).toEqual({ ...input, createdAt: expect.any(Number) });
      expect(expectRecentEpochMs(created.createdAt)).toBe(true);
      // Besides the key, only the insertion-order counter of dialects without a rowid (Postgres).
      const { seq, ...row } = await rawOne(ctx, `SELECT * FROM byok_keys WHERE id = ${sqlText(input.id)}`);
      expect(seq === undefined || Number.isInteger(toNumber(seq))).toBe(true);
      expect({
        ...row,
        allow_fallback: toBoolean(row.allow_fallback),
        created_at: toNumber(row.created_at),
      }).toEqual({
        id: input.id,
        account_id: account.id,
        provider: 'openai',
        label: null,
        allow_fallback: false,
        sealed_key: SEALED,
        created_at: created.createdAt,
      });
    });

    it('createByokKey - rejects an unknown account and a taken id (also of another account)', async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      const input = byokInput(account.id);
      await ctx.storage.createByokKey(input);

      await expect(ctx.storage.createByokKey(byokInput('acct_doesnotexist'))).rejects.toThrow();
      await expect(ctx.storage.createByokKey({ ...input, provider: 'anthropic' })).rejects.toThrow();
      await expect(ctx.storage.createByokKey({ ...input, accountId: other.id })).rejects.toThrow();
      expect(await rawCount(ctx, 'byok_keys')).toBe(1);
    });

    it('listByokKeys - lists the account’s keys oldest first (not by id), with number and boolean fields', async () => {
      const account = await newAccount();
      const created = [];
      for (const id of ['byok_c', 'byok_a', 'byok_b']) {
        created.push(
          await ctx.storage.createByokKey(byokInput(account.id, { id, allowFallback: id !== 'byok_a' })),
        );
        await nextMillisecond();
      }

      expect(await ctx.storage.listByokKeys(account.id)).toEqual(created);
      expect((await ctx.storage.listByokKeys(account.id)).map((key) => key.allowFallback)).toEqual([
        true,
        false,
        true,
      ]);
    });

    it('listByokKeys - keys created back to back (often in one millisecond) list in creation order', async () => {
      const account = await newAccount();
      const created = [];
      for (const id of ['byok_z', 'byok_y', 'byok_x', 'byok_w']) {
        created.push(await ctx.storage.createByokKey(byokInput(account.id, { id })));
      }

      expect((await ctx.storage.listByokKeys(account.id)).map((key) => key.id)).toEqual(
        created.map((k) => k.id),
      );
    });

    it('deleteByokKey - deletes the key once; a second delete and an unknown id answer false', async () => {
      const account = await newAccount();
      const kept = await ctx.storage.createByokKey(byokInput(account.id));
      const gone = await ctx.storage.createByokKey(byokInput(account.id));

      expect(await ctx.storage.deleteByokKey(account.id, gone.id)).toBe(true);
      expect(await ctx.storage.deleteByokKey(account.id, gone.id)).toBe(false);
      expect(await ctx.storage.deleteByokKey(account.id, 'byok_doesnotexist')).toBe(false);
      expect(await ctx.storage.listByokKeys(account.id)).toEqual([kept]);
      expect(await rawCount(ctx, 'byok_keys')).toBe(1);
    });

    it("BYOK keys are scoped to the account: another account's key is neither listed nor deleted", async () => {
      const mine = await newAccount('mine');
      const theirs = await newAccount('theirs');
      const key = await ctx.storage.createByokKey(byokInput(theirs.id));

      expect(await ctx.storage.listByokKeys(mine.id)).toEqual([]);
      expect(await ctx.storage.deleteByokKey(mine.id, key.id)).toBe(false);
      expect(await ctx.storage.listByokKeys(theirs.id)).toEqual([key]);
    });

    it("findApiKeyByHash - counts the account's BYOK keys (0, 1, 2, and 1 again after a delete), not another's", async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      await ctx.storage.createByokKey(byokInput(other.id));
      const { input } = await newKeyInput(account.id);
      const key = await ctx.storage.createApiKey(input);
      const byokKeys = async () => (await ctx.storage.findApiKeyByHash(input.hash))?.byokKeys;

      expect(await ctx.storage.findApiKeyByHash(input.hash)).toEqual({
        key,
        account,
        byokKeys: 0,
        guardrails: 0,
      });
      const first = await ctx.storage.createByokKey(byokInput(account.id));
      expect(await byokKeys()).toBe(1);
      await ctx.storage.createByokKey(byokInput(account.id, { provider: 'anthropic' }));
      expect(await byokKeys()).toBe(2);
      await ctx.storage.deleteByokKey(account.id, first.id);
      expect(await byokKeys()).toBe(1);
    });
  });

  describe('presets', () => {
    it('createPreset - stores the preset with createdAt = updatedAt = now and config as JSON text (raw)', async () => {
      const account = await newAccount();
      const input = presetInput(account.id, 'fast-cheap');

      const preset = await ctx.storage.createPreset(input);

      const { now: _now, ...fields } = input;
      expect(preset).toEqual({ ...fields, createdAt: T0, updatedAt: T0 });
      const row = await rawOne(ctx, `SELECT * FROM presets WHERE account_id = ${sqlText(account.id)}`);
      expect([row.name, row.description, toNumber(row.created_at), toNumber(row.updated_at)]).toEqual([
        'fast-cheap',
        'Fast and cheap',
        T0,
        T0,
      ]);
      expect(JSON.parse(String(row.config))).toEqual(input.config);
    });

    it('createPreset - a taken name answers null and changes nothing; the same name in another account is fine', async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      const first = await ctx.storage.createPreset(presetInput(account.id, 'fast'));

      expect(
        await ctx.storage.createPreset({
          ...presetInput(account.id, 'fast', T0 + 1),
          description: 'other',
          config: {},
        }),
      ).toBeNull();
      expect(await ctx.storage.getPreset(account.id, 'fast')).toEqual(first);
      expect(await ctx.storage.createPreset(presetInput(other.id, 'fast'))).toMatchObject({
        accountId: other.id,
      });
      expect(await rawCount(ctx, 'presets')).toBe(2);
    });

    it('createPreset - of concurrent creates of one name exactly one gets the preset', async () => {
      const account = await newAccount();
      const results = await concurrently(ctx, 8, (storage, i) =>
        storage.createPreset({ ...presetInput(account.id, 'raced'), description: `writer ${i}` }),
      );

      const winners = results.filter((preset) => preset !== null);
      expect(winners).toHaveLength(1);
      expect(await ctx.storage.getPreset(account.id, 'raced')).toEqual(winners[0]);
      expect(await rawCount(ctx, 'presets')).toBe(1);
    });

    it('createPreset - rejects an unknown account', async () => {
      await expect(ctx.storage.createPreset(presetInput('acct_doesnotexist', 'fast'))).rejects.toThrow();
      expect(await rawCount(ctx, 'presets')).toBe(0);
    });

    it("getPreset - returns the preset; null for an unknown name and for another account's preset", async () => {
      const mine = await newAccount('mine');
      const theirs = await newAccount('theirs');
      const preset = await ctx.storage.createPreset({ ...presetInput(mine.id, 'fast'), description: null });

      expect(await ctx.storage.getPreset(mine.id, 'fast')).toEqual(preset);
      expect(preset?.description).toBeNull();
      expect(await ctx.storage.getPreset(mine.id, 'slow')).toBeNull();
      expect(await ctx.storage.getPreset(theirs.id, 'fast')).toBeNull();
    });

    it("listPresets - lists the account's presets by name (code-unit order: '-' before letters), no one else's", async () => {
      const account = await newAccount();
      const other = await newAccount('other');
      for (const name of ['b', 'ab', 'a-c']) await ctx.storage.createPreset(presetInput(account.id, name));
      await ctx.storage.createPreset(presetInput(other.id, 'a'));

      const presets = await ctx.storage.listPresets(account.id);
      expect(presets.map((preset) => preset.name)).toEqual(['a-c', 'ab', 'b']);
      expect(presets[0]).toEqual(await ctx.storage.getPreset(account.id, 'a-c'));
      expect(await ctx.storage.listPresets((await newAccount('empty')).id)).toEqual([]);
    });

    it('updatePreset - changes only what the patch names and moves updatedAt to now', async () => {
      const account = await newAccount();
      const created = await ctx.storage.createPreset(presetInput(account.id, 'fast'));

      const described = await ctx.storage.updatePreset(account.id, 'fast', { description: null }, T0 + 10);
      expect(described).toEqual({ ...created, description: null, updatedAt: T0 + 10 });
      const configured = await ctx.storage.updatePreset(
        account.id,
        'fast',
        { config: { temperature: 1 } },
        T0 + 20,
      );
      expect(configured).toEqual({
        ...created,
        description: null,
        config: { temperature: 1 },
        updatedAt: T0 + 20,
      });
      expect(await ctx.storage.getPreset(account.id, 'fast')).toEqual(configured);
      const row = await rawOne(ctx, `SELECT * FROM presets WHERE account_id = ${sqlText(account.id)}`);
      expect([JSON.parse(String(row.config)), toNumber(row.created_at), toNumber(row.updated_at)]).toEqual([
        { temperature: 1 },
        T0,
        T0 + 20,
      ]);
    });

    it("updatePreset / deletePreset - null / false for an unknown name and for another account's preset, which stays", async () => {
      const mine = await newAccount('mine');
      const theirs = await newAccount('theirs');
      const preset = await ctx.storage.createPreset(presetInput(theirs.id, 'fast'));

      expect(await ctx.storage.updatePreset(mine.id, 'fast', { description: 'x' }, T0 + 1)).toBeNull();
      expect(await ctx.storage.updatePreset(theirs.id, 'slow', { description: 'x' }, T0 + 1)).toBeNull();
      expect(await ctx.storage.deletePreset(mine.id, 'fast')).toBe(false);
      expect(await ctx.storage.getPreset(theirs.id, 'fast')).toEqual(preset);
    });

    it('deletePreset - deletes the preset once; the name is free again', async () => {
      const account = await newAccount();
      await ctx.storage.createPreset(presetInput(account.id, 'fast'));

      expect(await ctx.storage.deletePreset(account.id, 'fast')).toBe(true);
      expect(await ctx.storage.deletePreset(account.id, 'fast')).toBe(false);
      expect(await ctx.storage.getPreset(account.id, 'fast')).toBeNull();
      expect(await rawCount(ctx, 'presets')).toBe(0);
      expect(await ctx.storage.createPreset(presetInput(account.id, 'fast'))).not.toBeNull();
    });
  });
}
