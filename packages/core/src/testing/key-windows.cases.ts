import { describe, expect, it } from 'vitest';
import type { LimitReset } from '../metering/limit-windows.js';
import type { ReserveCreditResult } from '../storage/metering-types.js';
import { credit, newKeyInput } from './fixtures.js';
import { concurrently, mustReserve, requestRecord, reserveInput } from './metering-fixtures.js';
import { rawCount, sqlText } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const at = (iso: string) => Date.parse(iso);
const WORST = 1_000;

/**
 * Windows on key limits (`limitReset`): the cap applies to the spend of the UTC day, week (from
 * Monday) or month containing the reserve's `now`. Every instant here is the reserve's own clock
 * (what the gateway's injected clock passes), so the boundaries are crossed without waiting; a
 * charge counts in the day its hold was taken, whenever it settles.
 */
export function keyWindowsCases(ctx: ConformanceContext): void {
  async function windowedKey(limitReset: LimitReset | null, spendLimitMicros: number | null) {
    const account = await ctx.storage.createAccount({ name: 'windowed' });
    await ctx.storage.appendLedgerEntries(account.id, [credit(1_000_000_000)]);
    const { input } = await newKeyInput(account.id, { spendLimitMicros, limitReset });
    return { account, key: await ctx.storage.createApiKey(input) };
  }
  type Windowed = Awaited<ReturnType<typeof windowedKey>>;

  const reserveAt = (w: Windowed, amount: number, now: number): Promise<ReserveCreditResult> =>
    ctx.storage.reserveCredit(reserveInput(w.account.id, w.key.id, amount, { now, ttlMs: 60_000 }));

  /** A hold of `amount` taken at `now`, settled (charged in full) at once. */
  async function spend(w: Windowed, amount: number, now: number): Promise<void> {
    const hold = await mustReserve(
      ctx.storage,
      reserveInput(w.account.id, w.key.id, amount, { now, ttlMs: 60_000 }),
    );
    await settle(w, hold.id, hold.requestId, amount);
  }
  const settle = (w: Windowed, reservationId: string, requestId: string, amount: number) =>
    ctx.storage.settleRequest({
      reservationId,
      record: requestRecord(w.account.id, { id: requestId, keyId: w.key.id, costMicros: amount }),
      charge: { amountMicros: amount, description: 'windowed', keyId: w.key.id },
    });

  const refusedFor = (availableMicros: number) => ({
    ok: false,
    reason: 'key_limit_exceeded',
    balanceMicros: expect.any(Number),
    availableMicros,
  });

  describe('key limit windows', () => {
    it('createApiKey / updateApiKey - store limitReset; null clears it, a patch without it keeps it', async () => {
      const w = await windowedKey('weekly', 5_000);
      expect(w.key.limitReset).toBe('weekly');
      expect((await ctx.storage.getApiKey(w.account.id, w.key.id))?.limitReset).toBe('weekly');
      const renamed = await ctx.storage.updateApiKey(w.account.id, w.key.id, { name: 'renamed' });
      expect(renamed?.limitReset).toBe('weekly');
      const monthly = await ctx.storage.updateApiKey(w.account.id, w.key.id, { limitReset: 'monthly' });
      expect(monthly?.limitReset).toBe('monthly');
      const cleared = await ctx.storage.updateApiKey(w.account.id, w.key.id, { limitReset: null });
      expect(cleared?.limitReset).toBeNull();
      await expect(
        ctx.storage.updateApiKey(w.account.id, w.key.id, { limitReset: 'hourly' as LimitReset }),
      ).rejects.toThrow();
    });

    it('daily - the cap is spent within a day and whole again at 00:00 UTC', async () => {
      const w = await windowedKey('daily', 3_000);
      await spend(w, 2_000, at('2031-03-05T10:00:00Z'));
      expect(await reserveAt(w, 1_001, at('2031-03-05T23:59:59.999Z'))).toEqual(refusedFor(1_000));
      await mustReserve(
        ctx.storage,
        reserveInput(w.account.id, w.key.id, 3_000, { now: at('2031-03-06T00:00:00Z') }),
      );
      // The lifetime spend keeps every day's charges.
      expect((await ctx.storage.getApiKey(w.account.id, w.key.id))?.spentMicros).toBe(2_000);
    });

    it('weekly - Sunday is the week before: the window turns on Monday 00:00 UTC', async () => {
      const w = await windowedKey('weekly', 3_000);
      // 2031-03-03 is a Monday, 2031-03-09 a Sunday.
      await spend(w, 1_500, at('2031-03-03T00:00:00Z'));
      await spend(w, 1_500, at('2031-03-09T23:59:59Z'));
      expect(await reserveAt(w, 1, at('2031-03-09T23:59:59.999Z'))).toEqual(refusedFor(0));
      await spend(w, 3_000, at('2031-03-10T00:00:00Z'));
      expect(await reserveAt(w, 1, at('2031-03-16T23:59:59Z'))).toEqual(refusedFor(0));
    });

    it('monthly - Jan 31 → Feb 1 and Dec 31 → Jan 1 start a new month from the 1st', async () => {
      const w = await windowedKey('monthly', 5_000);
      await spend(w, 4_000, at('2031-01-01T00:00:00Z'));
      await spend(w, 1_000, at('2031-01-31T23:59:59Z'));
      expect(await reserveAt(w, 1, at('2031-01-31T23:59:59.999Z'))).toEqual(refusedFor(0));
      await spend(w, 5_000, at('2031-02-01T00:00:00Z'));
      expect(await reserveAt(w, 1, at('2031-02-28T23:59:59Z'))).toEqual(refusedFor(0));

      await spend(w, 4_500, at('2031-12-31T23:59:59Z'));
      expect(await reserveAt(w, 501, at('2031-12-31T23:59:59.500Z'))).toEqual(refusedFor(500));
      await spend(w, 5_000, at('2032-01-01T00:00:00Z'));
    });

    it('leap day - Feb 28 → Feb 29 → Mar 1 2028: each a day of its own, February one month', async () => {
      const daily = await windowedKey('daily', 2_000);
      const monthly = await windowedKey('monthly', 5_000);
      for (const day of ['2028-02-28', '2028-02-29']) {
        await spend(daily, 2_000, at(`${day}T12:00:00Z`));
        expect(await reserveAt(daily, 1, at(`${day}T23:59:59.999Z`))).toEqual(refusedFor(0));
        await spend(monthly, 2_000, at(`${day}T12:00:00Z`));
      }
      expect(await reserveAt(monthly, 1_001, at('2028-02-29T23:59:59Z'))).toEqual(refusedFor(1_000));
      await spend(daily, 2_000, at('2028-03-01T00:00:00Z'));
      await spend(monthly, 5_000, at('2028-03-01T00:00:00Z'));
      const spent = await ctx.storage.getKeyWindowSpend([daily.key.id], at('2028-02-29T08:00:00Z'));
      expect(spent.get(daily.key.id)).toEqual({
        dailyMicros: 2_000,
        weeklyMicros: 4_000,
        monthlyMicros: 4_000,
      });
    });

    it('a hold taken at 23:59:59 and settled after midnight counts in the day it was taken', async () => {
      const w = await windowedKey('daily', 3_000);
      const hold = await mustReserve(
        ctx.storage,
        reserveInput(w.account.id, w.key.id, 2_500, { now: at('2031-03-05T23:59:59Z'), ttlMs: 60_000 }),
      );
      // Still live after midnight, yet not in the new day's window: the new day has its whole cap.
      const next = await mustReserve(
        ctx.storage,
        reserveInput(w.account.id, w.key.id, 3_000, { now: at('2031-03-06T00:00:01Z') }),
      );
      await ctx.storage.releaseReservation(next.id);
      await settle(w, hold.id, hold.requestId, 2_500);

      const spent = await ctx.storage.getKeyWindowSpend([w.key.id], at('2031-03-05T12:00:00Z'));
      expect(spent.get(w.key.id)?.dailyMicros).toBe(2_500);
      const today = await ctx.storage.getKeyWindowSpend([w.key.id], at('2031-03-06T00:00:02Z'));
      expect(today.get(w.key.id)?.dailyMicros ?? 0).toBe(0);
      const whole = await mustReserve(
        ctx.storage,
        reserveInput(w.account.id, w.key.id, 3_000, { now: at('2031-03-06T00:00:03Z') }),
      );
      await ctx.storage.releaseReservation(whole.id);
      // The old day took the charge: its cap is spent but for 500.
      expect(await reserveAt(w, 501, at('2031-03-05T23:59:59.500Z'))).toEqual(refusedFor(500));
    });

    it('a hold taken before a boundary counts in its own window while it is live, not in the next', async () => {
      const w = await windowedKey('daily', 3_000);
      await mustReserve(
        ctx.storage,
        reserveInput(w.account.id, w.key.id, 2_000, { now: at('2031-03-05T23:59:30Z') }),
      );
      expect(await reserveAt(w, 1_001, at('2031-03-05T23:59:40Z'))).toEqual(refusedFor(1_000));
      await mustReserve(
        ctx.storage,
        reserveInput(w.account.id, w.key.id, 3_000, { now: at('2031-03-06T00:00:00Z') }),
      );
    });

    it('getKeyWindowSpend - day, week and month of every key asked for, whatever its reset; absent when none', async () => {
      const lifetime = await windowedKey(null, null);
      const other = await windowedKey('daily', null);
      // 2031-03-10 is a Monday; March began on a Saturday.
      await spend(lifetime, 100, at('2031-02-28T12:00:00Z'));
      await spend(lifetime, 200, at('2031-03-01T12:00:00Z'));
      await spend(lifetime, 300, at('2031-03-10T00:00:00Z'));
      await spend(lifetime, 400, at('2031-03-12T09:00:00Z'));
      await spend(other, 50, at('2031-03-12T10:00:00Z'));

      const spent = await ctx.storage.getKeyWindowSpend(
        [lifetime.key.id, other.key.id, 'key_none'],
        at('2031-03-12T23:00:00Z'),
      );
      expect(spent.get(lifetime.key.id)).toEqual({ dailyMicros: 400, weeklyMicros: 700, monthlyMicros: 900 });
      expect(spent.get(other.key.id)).toEqual({ dailyMicros: 50, weeklyMicros: 50, monthlyMicros: 50 });
      expect(spent.has('key_none')).toBe(false);
      expect((await ctx.storage.getKeyWindowSpend([], Date.now())).size).toBe(0);
    });

    it('a window set later counts what the key spent since the window began', async () => {
      const w = await windowedKey(null, 10_000);
      await spend(w, 2_500, at('2031-03-05T08:00:00Z'));
      await ctx.storage.updateApiKey(w.account.id, w.key.id, {
        spendLimitMicros: 3_000,
        limitReset: 'daily',
      });
      expect(await reserveAt(w, 501, at('2031-03-05T09:00:00Z'))).toEqual(refusedFor(500));
      await ctx.storage.updateApiKey(w.account.id, w.key.id, { limitReset: null });
      // Back to the lifetime cap: 3 000 less the lifetime's 2 500.
      expect(await reserveAt(w, 501, at('2031-03-09T09:00:00Z'))).toEqual(refusedFor(500));
    });

    it('100 concurrent reserves against a daily cap covering exactly 10: exactly 10 hold (half through a second storage when there is one)', async () => {
      const w = await windowedKey('daily', 12 * WORST);
      // Yesterday's spend does not count; today's does.
      await spend(w, 5 * WORST, at('2031-03-04T12:00:00Z'));
      await spend(w, 2 * WORST, at('2031-03-05T01:00:00Z'));
      const now = at('2031-03-05T12:00:00Z');
      const results = await concurrently(ctx, 100, (storage) =>
        storage.reserveCredit(reserveInput(w.account.id, w.key.id, WORST, { now })),
      );
      expect(results.filter((r) => r.ok)).toHaveLength(10);
      expect(new Set(results.filter((r) => !r.ok).map((r) => (r.ok ? null : r.reason)))).toEqual(
        new Set(['key_limit_exceeded']),
      );
      expect(await rawCount(ctx, 'credit_reservations', `key_id = ${sqlText(w.key.id)}`)).toBe(10);
    });
  });
}
