import { describe, expect, it } from 'vitest';
import { meteredAccount, mustReserve, reserveInput } from './metering-fixtures.js';
import { rawCount } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = 1_700_000_040_000;
const MINUTE = 60_000;

export function sweepExpiredCases(ctx: ConformanceContext): void {
  describe('sweepExpired', () => {
    it('sweepExpired - deletes expired holds and claims and rate-limit windows two minutes old, keeps the rest, and counts', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000 });
      const now = T0 + 2 * MINUTE;
      await mustReserve(
        ctx.storage,
        reserveInput(account.id, key.id, 100, { now: now - 1_000, ttlMs: 1_000 }),
      );
      const live = await mustReserve(ctx.storage, reserveInput(account.id, key.id, 100, { now, ttlMs: 1 }));
      const claim = { accountId: account.id, requestId: 'req_a', inFlightTtlMs: 1_000 };
      await ctx.storage.claimIdempotencyKey({ ...claim, key: 'expired', now: now - 1_000 });
      await ctx.storage.claimIdempotencyKey({ ...claim, key: 'live', now });
      // Windows starting at T0 (two minutes back: dead), T0 + 1 min (the previous one) and now.
      for (const at of [T0, T0 + MINUTE, now]) {
        await ctx.storage.hitRateLimit({ subject: 'key:x', limit: 5, windowMs: MINUTE, now: at });
      }

      expect(await ctx.storage.sweepExpired(now)).toBe(3);

      expect(await ctx.storage.listReservations(account.id, 0)).toEqual([live]);
      expect(await rawCount(ctx, 'idempotency_claims', `idem_key = 'live'`)).toBe(1);
      expect(await rawCount(ctx, 'idempotency_claims')).toBe(1);
      expect(await rawCount(ctx, 'rate_limit_windows', `window_start = ${T0}`)).toBe(0);
      expect(await rawCount(ctx, 'rate_limit_windows')).toBe(2);
      expect(await ctx.storage.sweepExpired(now)).toBe(0);
    });
  });
}
