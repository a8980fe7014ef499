import { describe, expect, it } from 'vitest';
import type { CachedResponse } from '../storage/account-features.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_000_000;
const TTL = 300_000;
/** A lookup id as the gateway derives it: 64 lower-case hex characters. */
const LOOKUP = 'a3f1c9e07b5d2468a3f1c9e07b5d2468a3f1c9e07b5d2468a3f1c9e07b5d2468';

export function responseCacheCases(ctx: ConformanceContext): void {
  const entry = (accountId: string, overrides: Partial<CachedResponse> = {}): CachedResponse => ({
    accountId,
    lookupId: LOOKUP,
    sealedBody: 'v1.sealed-answer.Zm9vYmFy',
    createdAt: T0,
    expiresAt: T0 + TTL,
    ...overrides,
  });
  const rawEntry = async (accountId: string, lookupId = LOOKUP) => {
    const row = await rawOne(
      ctx,
      `SELECT * FROM response_cache WHERE account_id = ${sqlText(accountId)} AND lookup_id = ${sqlText(lookupId)}`,
    );
    return {
      accountId: row.account_id,
      lookupId: row.lookup_id,
      sealedBody: row.sealed_body,
      createdAt: toNumber(row.created_at),
      expiresAt: toNumber(row.expires_at),
    };
  };
  const newAccount = (name = 'cache') => ctx.storage.createAccount({ name });

  describe('response cache', () => {
    it('putCachedResponse / getCachedResponse - round-trips the entry, stored as given (raw)', async () => {
      const account = await newAccount();
      const cached = entry(account.id);

      await ctx.storage.putCachedResponse(cached);

      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0 + 1)).toEqual(cached);
      expect(await rawEntry(account.id)).toEqual(cached);
    });

    it('getCachedResponse - live while expiresAt > now: null at expiresAt and after, and for an unknown lookup id', async () => {
      const account = await newAccount();
      const cached = entry(account.id);
      await ctx.storage.putCachedResponse(cached);

      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0 + TTL - 1)).toEqual(cached);
      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0 + TTL)).toBeNull();
      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0 + TTL + 1)).toBeNull();
      expect(await ctx.storage.getCachedResponse(account.id, 'f'.repeat(64), T0)).toBeNull();
    });

    it('putCachedResponse - over an entry of the same key replaces the whole row, also an expired one and with an earlier expiry', async () => {
      const account = await newAccount();
      await ctx.storage.putCachedResponse(entry(account.id));
      const shorter = entry(account.id, { sealedBody: 'v1.second', createdAt: T0 + 5, expiresAt: T0 + 10 });

      await ctx.storage.putCachedResponse(shorter);

      expect(await rawEntry(account.id)).toEqual(shorter);
      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0 + 10)).toBeNull();
      const revived = entry(account.id, {
        sealedBody: 'v1.third',
        createdAt: T0 + 20,
        expiresAt: T0 + 20 + TTL,
      });
      await ctx.storage.putCachedResponse(revived);
      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0 + 21)).toEqual(revived);
      expect(await rawCount(ctx, 'response_cache')).toBe(1);
    });

    it('response cache is scoped per account: the same lookup id is two entries, invisible to each other', async () => {
      const mine = await newAccount('mine');
      const theirs = await newAccount('theirs');
      const stranger = await newAccount('stranger');
      const myEntry = entry(mine.id, { sealedBody: 'v1.mine' });
      const theirEntry = entry(theirs.id, { sealedBody: 'v1.theirs' });

      await ctx.storage.putCachedResponse(myEntry);
      await ctx.storage.putCachedResponse(theirEntry);

      expect(await ctx.storage.getCachedResponse(mine.id, LOOKUP, T0)).toEqual(myEntry);
      expect(await ctx.storage.getCachedResponse(theirs.id, LOOKUP, T0)).toEqual(theirEntry);
      expect(await ctx.storage.getCachedResponse(stranger.id, LOOKUP, T0)).toBeNull();
      expect(await rawCount(ctx, 'response_cache')).toBe(2);
    });

    it('putCachedResponse - concurrent puts of one key leave exactly one row, whole, equal to one of them', async () => {
      const account = await newAccount();
      const entries = Array.from({ length: 10 }, (_, i) =>
        entry(account.id, {
          sealedBody: `v1.writer-${i}.${'x'.repeat(i * 100)}`,
          createdAt: T0 + i,
          expiresAt: T0 + TTL + i,
        }),
      );

      await concurrently(ctx, entries.length, (storage, i) => storage.putCachedResponse(entries[i]!));

      expect(await rawCount(ctx, 'response_cache')).toBe(1);
      const stored = await rawEntry(account.id);
      expect(entries).toContainEqual(stored);
      expect(await ctx.storage.getCachedResponse(account.id, LOOKUP, T0)).toEqual(stored);
    });

    it('sweepExpired - deletes cached responses with expiresAt <= now, counts them, and keeps live ones', async () => {
      const account = await newAccount();
      const now = T0 + TTL;
      await ctx.storage.putCachedResponse(
        entry(account.id, { lookupId: 'a'.repeat(64), expiresAt: now - 1 }),
      );
      await ctx.storage.putCachedResponse(entry(account.id, { lookupId: 'b'.repeat(64), expiresAt: now }));
      const live = entry(account.id, { lookupId: 'c'.repeat(64), expiresAt: now + 1 });
      await ctx.storage.putCachedResponse(live);

      expect(await ctx.storage.sweepExpired(now)).toBe(2);

      expect(await rawCount(ctx, 'response_cache')).toBe(1);
      expect(await ctx.storage.getCachedResponse(account.id, live.lookupId, now)).toEqual(live);
      expect(await ctx.storage.sweepExpired(now)).toBe(0);
    });
  });
}
