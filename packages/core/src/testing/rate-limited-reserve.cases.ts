import { describe, expect, it } from 'vitest';
import type { CreditReservation, RateLimitInput } from '../storage/metering-types.js';
import {
  concurrently,
  meteredAccount,
  mustReserve,
  requestRecord,
  reserveInput,
} from './metering-fixtures.js';
import { rawCount, sqlText } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** A moment that starts a 1-minute window, and one 5 s into it; time is injected, nothing sleeps. */
const T0 = 1_700_000_040_000;
const AT = T0 + 5_000;
const MINUTE = 60_000;

/**
 * `reserveCredit` carrying the request's rate-limit hit (`ReserveCreditInput.rateLimit`): the hit is
 * counted first, as `hitRateLimit` counts it; a refused hit holds nothing; an admitted one stays
 * counted when the reserve is refused for credit. Exact under concurrency, mixed with settles in
 * the same turn, and when another call of the same batch fails.
 */
export function rateLimitedReserveCases(ctx: ConformanceContext): void {
  const hitOf = (subject: string, limit: number): RateLimitInput => ({
    subject,
    limit,
    windowMs: MINUTE,
    now: AT,
  });
  const holdsOf = (accountId: string) =>
    rawCount(ctx, 'credit_reservations', `account_id = ${sqlText(accountId)}`);

  describe('reserveCredit with a rate-limit hit', () => {
    it('reserveCredit with rateLimit - admitted hits hold; a refused one holds nothing and answers rate_limited with its retryAfterMs', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000 });
      const reserve = () =>
        ctx.storage.reserveCredit(
          reserveInput(account.id, key.id, 100, { now: AT, rateLimit: hitOf('key:rr-a', 2) }),
        );

      expect(await reserve()).toMatchObject({ ok: true });
      expect(await reserve()).toMatchObject({ ok: true });
      expect(await reserve()).toEqual({
        ok: false,
        reason: 'rate_limited',
        retryAfterMs: MINUTE - 5_000 + 1,
      });
      expect(await holdsOf(account.id)).toBe(2);
      // The reserves' hits are the window's: a hit on its own is refused too.
      expect((await ctx.storage.hitRateLimit(hitOf('key:rr-a', 2))).allowed).toBe(false);
    });

    it('reserveCredit with rateLimit - an admitted hit stays counted when the reserve is refused for credit', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 100 });
      const reserve = () =>
        ctx.storage.reserveCredit(
          reserveInput(account.id, key.id, 1_000, { now: AT, rateLimit: hitOf('key:rr-b', 2) }),
        );

      expect(await reserve()).toMatchObject({ ok: false, reason: 'insufficient_credit' });
      expect(await reserve()).toMatchObject({ ok: false, reason: 'insufficient_credit' });
      expect(await reserve()).toMatchObject({ ok: false, reason: 'rate_limited' });
      expect(await holdsOf(account.id)).toBe(0);
    });

    it('reserveCredit with rateLimit - 20 at once with settles in the same turn (half through a second storage when there is one) admit exactly `limit`', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 1_000_000 });
      const held: CreditReservation[] = [];
      for (let i = 0; i < 3; i++)
        held.push(await mustReserve(ctx.storage, reserveInput(account.id, key.id, 10)));
      // The three settles first, then the reserves, all started in one turn.
      const answers = await concurrently(ctx, 23, (storage, i) => {
        const hold = held[i];
        if (!hold) {
          return storage.reserveCredit(
            reserveInput(account.id, key.id, 10, { now: AT, rateLimit: hitOf('key:rr-c', 5) }),
          );
        }
        return storage
          .settleRequest({
            reservationId: hold.id,
            record: requestRecord(account.id, { id: hold.requestId, keyId: key.id, costMicros: 7 }),
            charge: { amountMicros: 7, description: 'settled beside hits', keyId: key.id },
          })
          .then(() => null);
      });
      const results = answers.filter((answer) => answer !== null);

      expect(results.filter((r) => r.ok)).toHaveLength(5);
      expect(results.filter((r) => !r.ok && r.reason === 'rate_limited')).toHaveLength(15);
      expect(await holdsOf(account.id)).toBe(5);
      expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(1_000_000 - 3 * 7);
    });

    it('reserveCredit with rateLimit - a call of the same turn that fails leaves the others their answers and their hits', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const valid = (i: number) =>
        ctx.storage.reserveCredit(
          reserveInput(account.id, key.id, 100 + i, { now: AT, rateLimit: hitOf('key:rr-d', 3) }),
        );
      const [missing, ...answers] = await Promise.allSettled([
        ctx.storage.reserveCredit(
          reserveInput(account.id, 'key_missing', 1, { now: AT, rateLimit: hitOf('key:rr-missing', 3) }),
        ),
        valid(0),
        valid(1),
        valid(2),
        valid(3),
      ]);

      expect(missing?.status).toBe('rejected');
      expect(
        answers.map((a) => (a.status === 'fulfilled' ? (a.value.ok ? 'held' : a.value.reason) : 'failed')),
      ).toEqual(['held', 'held', 'held', 'rate_limited']);
      expect(await holdsOf(account.id)).toBe(3);
    });
  });
}
