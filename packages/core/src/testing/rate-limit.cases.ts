import { describe, expect, it } from 'vitest';
import type { RateLimitHit } from '../storage/metering-types.js';
import type { Storage } from '../storage/types.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** A moment that starts both a 1-second and a 1-minute window; time is injected, nothing sleeps. */
const T0 = 1_700_000_040_000;
const MINUTE = 60_000;
const ADMITTED: RateLimitHit = { allowed: true, retryAfterMs: 0 };
const refused = (retryAfterMs: number): RateLimitHit => ({ allowed: false, retryAfterMs });

export function rateLimitCases(ctx: ConformanceContext): void {
  const counted = async (subject: string, windowStart: number) => {
    const rows = await ctx.raw(
      `SELECT count FROM rate_limit_windows WHERE subject = ${sqlText(subject)} AND window_start = ${windowStart}`,
    );
    return rows.length === 0 ? 0 : toNumber(rows[0]!.count);
  };
  const hitter = (subject: string, limit: number, windowMs: number, storage?: Storage) => (now: number) =>
    (storage ?? ctx.storage).hitRateLimit({ subject, limit, windowMs, now });

  describe('hitRateLimit', () => {
    it('hitRateLimit - admits `limit` hits in a window, then refuses until the previous window has decayed enough', async () => {
      const hit = hitter('key:a', 3, 1_000);

      expect(await hit(T0)).toEqual(ADMITTED);
      expect(await hit(T0 + 100)).toEqual(ADMITTED);
      expect(await hit(T0 + 200)).toEqual(ADMITTED);
      // Full now; at the next window's start the 3 still weigh 3, one millisecond later ⌊3 × 999/1000⌋ = 2.
      expect(await hit(T0 + 250)).toEqual(refused(751));
      expect(await hit(T0 + 1_000)).toEqual(refused(1));
      expect(await hit(T0 + 1_001)).toEqual(ADMITTED);
      // Now ⌊3 × (1000 − e)/1000⌋ + 1 < 3 needs e ≥ 334.
      expect(await hit(T0 + 1_001)).toEqual(refused(333));
      expect(await hit(T0 + 1_334)).toEqual(ADMITTED);
      expect(await counted('key:a', T0)).toBe(3);
      expect(await counted('key:a', T0 + 1_000)).toBe(2);
    });

    it('hitRateLimit - weighs the previous window by the part of it still inside the sliding minute', async () => {
      const hit = hitter('key:b', 10, MINUTE);
      for (let i = 0; i < 10; i++) expect(await hit(T0 + i)).toEqual(ADMITTED);
      const half = T0 + MINUTE + 30_000;

      // ⌊10 × 30000/60000⌋ = 5 of the previous window still count: 5 more fit.
      for (let i = 0; i < 5; i++) expect(await hit(half)).toEqual(ADMITTED);
      expect(await hit(half)).toEqual(refused(1));
      expect(await hit(half + 1)).toEqual(ADMITTED);
      // 6 current: ⌊10 × (60000 − e)/60000⌋ ≤ 3 needs e ≥ 36001.
      expect(await hit(half + 1)).toEqual(refused(6_000));
      expect(await hit(T0 + MINUTE + 36_001)).toEqual(ADMITTED);
    });

    it('hitRateLimit - a window two windows back no longer counts (rollover)', async () => {
      const hit = hitter('key:c', 10, MINUTE);
      for (let i = 0; i < 10; i++) await hit(T0 + 59_000);
      // The 10 weigh 10 at the next window's start and ⌊10 × 59999/60000⌋ = 9 a millisecond later.
      expect(await hit(T0 + 59_999)).toEqual(refused(2));

      for (let i = 0; i < 10; i++) expect(await hit(T0 + 2 * MINUTE)).toEqual(ADMITTED);
      expect(await hit(T0 + 2 * MINUTE)).toMatchObject({ allowed: false });
    });

    it('hitRateLimit - refused hits are not counted (raw)', async () => {
      const hit = hitter('key:d', 2, MINUTE);
      const results = [];
      for (let i = 0; i < 7; i++) results.push((await hit(T0 + 10 * i)).allowed);

      expect(results).toEqual([true, true, false, false, false, false, false]);
      expect(await counted('key:d', T0)).toBe(2);
    });

    it('hitRateLimit - counts each subject apart', async () => {
      expect(await hitter('key:e', 1, MINUTE)(T0)).toEqual(ADMITTED);
      expect(await hitter('key:f', 1, MINUTE)(T0)).toEqual(ADMITTED);
      expect((await hitter('key:e', 1, MINUTE)(T0)).allowed).toBe(false);
      expect(await rawCount(ctx, 'rate_limit_windows', `window_start = ${T0}`)).toBe(2);
    });

    it('hitRateLimit - rejects a limit or a window below 1', async () => {
      await expect(hitter('key:g', 0, MINUTE)(T0)).rejects.toThrow();
      await expect(hitter('key:g', 5, 0)(T0)).rejects.toThrow();
    });

    it('hitRateLimit - 100 concurrent hits at one moment admit exactly `limit` (half through a second storage when there is one)', async () => {
      const results = await concurrently(ctx, 100, (storage) =>
        storage.hitRateLimit({ subject: 'key:busy', limit: 10, windowMs: MINUTE, now: T0 + 5_000 }),
      );

      expect(results.filter((result) => result.allowed)).toHaveLength(10);
      expect(new Set(results.filter((result) => !result.allowed).map((r) => r.retryAfterMs))).toEqual(
        new Set([MINUTE - 5_000 + 1]),
      );
      const row = await rawOne(ctx, `SELECT count FROM rate_limit_windows WHERE subject = 'key:busy'`);
      expect(toNumber(row.count)).toBe(10);
    });

    it('hitRateLimit - a second storage on the same database shares the counter', async (test) => {
      const { openSecond } = ctx.harness;
      if (!openSecond) return test.skip('this harness has no second storage (one connection only)');
      const second = await openSecond.call(ctx.harness);
      try {
        const first = hitter('key:shared', 4, MINUTE);
        const other = hitter('key:shared', 4, MINUTE, second);
        expect([await first(T0), await other(T0 + 1), await first(T0 + 2), await other(T0 + 3)]).toEqual([
          ADMITTED,
          ADMITTED,
          ADMITTED,
          ADMITTED,
        ]);
        expect((await first(T0 + 4)).allowed).toBe(false);
        expect((await other(T0 + 4)).allowed).toBe(false);
      } finally {
        await second.close();
      }
    });
  });
}
