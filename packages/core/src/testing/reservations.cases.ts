import { describe, expect, it } from 'vitest';
import { charge } from './fixtures.js';
import {
  concurrently,
  meteredAccount,
  mustReserve,
  requestRecord,
  reserveInput,
} from './metering-fixtures.js';
import { rawCount, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** One request's worst case in the concurrency tests. */
const WORST = 1_000;
const RACERS = 50;

export function reservationsCases(ctx: ConformanceContext): void {
  const holdCount = (accountId: string) =>
    rawCount(ctx, 'credit_reservations', `account_id = ${sqlText(accountId)}`);

  describe('reserveCredit', () => {
    it('reserveCredit - holds the amount until now + ttlMs and stores the hold (raw)', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000 });
      const input = reserveInput(account.id, key.id, 2_500, { now: 1_700_000_000_000, ttlMs: 30_000 });

      const result = await ctx.storage.reserveCredit(input);

      expect(result).toEqual({
        ok: true,
        reservation: {
          id: expect.stringMatching(/^res_[0-9a-z]+$/),
          accountId: account.id,
          keyId: key.id,
          requestId: input.requestId,
          amountMicros: 2_500,
          createdAt: 1_700_000_000_000,
          expiresAt: 1_700_000_030_000,
        },
      });
      const id = result.ok ? result.reservation.id : '';
      const row = await rawOne(ctx, `SELECT * FROM credit_reservations WHERE id = ${sqlText(id)}`);
      expect([row.account_id, row.key_id, row.request_id]).toEqual([account.id, key.id, input.requestId]);
      expect([toNumber(row.amount_micros), toNumber(row.expires_at)]).toEqual([2_500, 1_700_000_030_000]);
      // A hold moves no money.
      expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(10_000);
    });

    it('reserveCredit - refuses with insufficient_credit when balance minus live holds cannot cover the amount', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000 });
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 7_000));

      expect(await ctx.storage.reserveCredit(reserveInput(account.id, key.id, 3_001))).toEqual({
        ok: false,
        reason: 'insufficient_credit',
        balanceMicros: 10_000,
        availableMicros: 3_000,
      });
      expect(await holdCount(account.id)).toBe(1);
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 3_000));
      expect(await holdCount(account.id)).toBe(2);
    });

    it('reserveCredit - reports a negative available amount when charges landed after the holds', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000 });
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 8_000));
      await ctx.storage.appendLedgerEntries(account.id, [charge(5_000)]);

      expect(await ctx.storage.reserveCredit(reserveInput(account.id, key.id, 1))).toEqual({
        ok: false,
        reason: 'insufficient_credit',
        balanceMicros: 5_000,
        availableMicros: -3_000,
      });
    });

    it("reserveCredit - refuses with key_limit_exceeded when the key's spend + its live holds + amount pass its cap", async () => {
      const { account, key } = await meteredAccount(ctx.storage, {
        balanceMicros: 1_000_000,
        spendLimitMicros: 5_000,
      });
      const record = requestRecord(account.id, { keyId: key.id, costMicros: 1_000 });
      await ctx.storage.settleRequest({
        reservationId: null,
        record,
        charge: { amountMicros: 1_000, description: 'spent', keyId: key.id },
      });
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 2_500));
      // A hold of another key of the account counts against the balance, not against this key's cap.
      const other = await ctx.storage.createApiKey({
        accountId: account.id,
        name: 'other',
        scope: 'inference',
        env: 'live',
        hash: 'b'.repeat(64),
        prefix: 'gw_live_bbbbbb',
      });
      await mustReserve(ctx.storage, reserveInput(account.id, other.id, 10_000));

      expect(await ctx.storage.reserveCredit(reserveInput(account.id, key.id, 1_501))).toEqual({
        ok: false,
        reason: 'key_limit_exceeded',
        balanceMicros: 999_000,
        availableMicros: 1_500,
      });
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 1_500));
    });

    it("reserveCredit - refuses with monthly_limit_exceeded when the month's charges + live holds + amount pass the ceiling", async () => {
      const { account, key } = await meteredAccount(ctx.storage, {
        balanceMicros: 1_000_000,
        monthlyLimitMicros: 10_000,
      });
      await ctx.storage.appendLedgerEntries(account.id, [charge(3_000)]);
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 4_000));

      expect(await ctx.storage.reserveCredit(reserveInput(account.id, key.id, 3_001))).toEqual({
        ok: false,
        reason: 'monthly_limit_exceeded',
        balanceMicros: 997_000,
        availableMicros: 3_000,
      });
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 3_000));
    });

    it('reserveCredit - the monthly ceiling counts only the charges of the UTC month containing now', async () => {
      const { account, key } = await meteredAccount(ctx.storage, {
        balanceMicros: 1_000_000,
        monthlyLimitMicros: 10_000,
      });
      const { entries } = await ctx.storage.appendLedgerEntries(account.id, [charge(8_000)]);
      const chargedAt = new Date(entries[0]!.createdAt);
      const nextMonth = Date.UTC(chargedAt.getUTCFullYear(), chargedAt.getUTCMonth() + 1, 1);

      const thisMonth = await ctx.storage.reserveCredit(reserveInput(account.id, key.id, 5_000));
      expect(thisMonth).toMatchObject({
        ok: false,
        reason: 'monthly_limit_exceeded',
        availableMicros: 2_000,
      });
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 5_000, { now: nextMonth }));
    });

    it('reserveCredit - checks the balance first, then the key cap, then the monthly ceiling', async () => {
      const { account, key } = await meteredAccount(ctx.storage, {
        balanceMicros: 1_000,
        spendLimitMicros: 800,
        monthlyLimitMicros: 500,
      });
      const attempt = (amount: number) => ctx.storage.reserveCredit(reserveInput(account.id, key.id, amount));

      expect(await attempt(2_000)).toMatchObject({ reason: 'insufficient_credit', availableMicros: 1_000 });
      expect(await attempt(900)).toMatchObject({ reason: 'key_limit_exceeded', availableMicros: 800 });
      expect(await attempt(600)).toMatchObject({ reason: 'monthly_limit_exceeded', availableMicros: 500 });
      expect(await attempt(500)).toMatchObject({ ok: true });
      expect(await holdCount(account.id)).toBe(1);
    });

    it('reserveCredit - an expired hold no longer counts: a hold is live while expiresAt > now', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const t = Date.now();
      const first = await mustReserve(
        ctx.storage,
        reserveInput(account.id, key.id, 1_000, { now: t, ttlMs: 5_000 }),
      );

      const stillHeld = await ctx.storage.reserveCredit(
        reserveInput(account.id, key.id, 1, { now: t + 4_999 }),
      );
      expect(stillHeld).toMatchObject({ ok: false, reason: 'insufficient_credit', availableMicros: 0 });
      expect(await ctx.storage.listReservations(account.id, t + 4_999)).toEqual([first]);

      const second = await mustReserve(
        ctx.storage,
        reserveInput(account.id, key.id, 1_000, { now: t + 5_000 }),
      );
      expect(await ctx.storage.listReservations(account.id, t + 5_000)).toEqual([second]);
      // A hold taken "later" is still live when asked about an earlier moment.
      expect(await ctx.storage.listReservations(account.id, t)).toEqual([first, second]);
    });

    it("reserveCredit - another account's holds do not count", async () => {
      const mine = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const theirs = await meteredAccount(ctx.storage, { balanceMicros: 1_000, name: 'theirs' });
      await mustReserve(ctx.storage, reserveInput(theirs.account.id, theirs.key.id, 1_000));

      await mustReserve(ctx.storage, reserveInput(mine.account.id, mine.key.id, 1_000));
      expect(await ctx.storage.listReservations(theirs.account.id, Date.now())).toHaveLength(1);
    });

    it('reserveCredit - rejects an unknown account, a key of another account and a non-integer amount', async () => {
      const mine = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const theirs = await meteredAccount(ctx.storage, { balanceMicros: 1_000, name: 'theirs' });

      await expect(ctx.storage.reserveCredit(reserveInput('acct_missing', mine.key.id, 1))).rejects.toThrow();
      await expect(
        ctx.storage.reserveCredit(reserveInput(mine.account.id, theirs.key.id, 1)),
      ).rejects.toThrow();
      await expect(
        ctx.storage.reserveCredit(reserveInput(mine.account.id, mine.key.id, 1.5)),
      ).rejects.toThrow();
      expect(await rawCount(ctx, 'credit_reservations')).toBe(0);
    });

    it('listReservations - lists only live holds of the account, oldest first', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000 });
      const t = Date.now();
      const a = await mustReserve(
        ctx.storage,
        reserveInput(account.id, key.id, 100, { now: t - 2, ttlMs: 1 }),
      );
      const b = await mustReserve(ctx.storage, reserveInput(account.id, key.id, 200, { now: t - 1 }));
      const c = await mustReserve(ctx.storage, reserveInput(account.id, key.id, 300, { now: t }));

      expect(a.expiresAt).toBe(t - 1);
      expect(await ctx.storage.listReservations(account.id, t)).toEqual([b, c]);
      expect(await ctx.storage.listReservations('acct_missing', t)).toEqual([]);
    });

    it('releaseReservation - deletes the hold, frees its credit, and is idempotent', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const hold = await mustReserve(ctx.storage, reserveInput(account.id, key.id, 1_000));

      await ctx.storage.releaseReservation(hold.id);
      expect(await holdCount(account.id)).toBe(0);
      await expect(ctx.storage.releaseReservation(hold.id)).resolves.toBeUndefined();
      await expect(ctx.storage.releaseReservation('res_missing')).resolves.toBeUndefined();
      await mustReserve(ctx.storage, reserveInput(account.id, key.id, 1_000));
    });
  });

  describe('extendReservation', () => {
    it('extendReservation - pushes a live hold out, so it keeps counting after its first expiry', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const t = Date.now();
      const hold = await mustReserve(
        ctx.storage,
        reserveInput(account.id, key.id, 1_000, { now: t, ttlMs: 1_000 }),
      );

      expect(await ctx.storage.extendReservation(hold.id, t + 500, t + 5_000)).toBe(true);
      const later = t + 2_000;
      expect(await ctx.storage.listReservations(account.id, later)).toEqual([
        { ...hold, expiresAt: t + 5_000 },
      ]);
      const refused = await ctx.storage.reserveCredit(reserveInput(account.id, key.id, 1, { now: later }));
      expect(refused).toMatchObject({ ok: false, reason: 'insufficient_credit' });
      expect(
        toNumber(
          (await rawOne(ctx, `SELECT expires_at FROM credit_reservations WHERE id = ${sqlText(hold.id)}`))
            .expires_at,
        ),
      ).toBe(t + 5_000);
    });

    it('extendReservation - never moves an expiry earlier, and reports a released or expired hold as gone', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 1_000 });
      const t = Date.now();
      const hold = await mustReserve(
        ctx.storage,
        reserveInput(account.id, key.id, 500, { now: t, ttlMs: 10_000 }),
      );
      expect(await ctx.storage.extendReservation(hold.id, t, t + 1_000)).toBe(true);
      expect((await ctx.storage.listReservations(account.id, t))[0]?.expiresAt).toBe(t + 10_000);
      expect(await ctx.storage.extendReservation(hold.id, t + 10_000, t + 20_000)).toBe(false);
      await ctx.storage.releaseReservation(hold.id);
      expect(await ctx.storage.extendReservation(hold.id, t, t + 20_000)).toBe(false);
      expect(await ctx.storage.extendReservation('res_missing', t, t + 20_000)).toBe(false);
    });
  });

  describe('reserveCredit under concurrency', () => {
    /** Fires RACERS reserves of WORST at once and checks exactly `expected` landed, raw too. */
    async function race(accountId: string, keyId: string, expected: number, reason: string) {
      const results = await concurrently(ctx, RACERS, (storage) =>
        storage.reserveCredit(reserveInput(accountId, keyId, WORST)),
      );
      const refused = results.filter((result) => !result.ok);
      expect(results.length - refused.length).toBe(expected);
      expect(new Set(refused.map((result) => (result.ok ? null : result.reason)))).toEqual(new Set([reason]));
      expect(await holdCount(accountId)).toBe(expected);
      const row = await rawOne(
        ctx,
        `SELECT SUM(amount_micros) AS held FROM credit_reservations WHERE account_id = ${sqlText(accountId)}`,
      );
      expect(toNumber(row.held)).toBe(expected * WORST);
    }

    it(`reserveCredit - ${RACERS} concurrent reserves against a balance covering exactly 10 worst cases: exactly 10 hold (half through a second storage when there is one)`, async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10 * WORST });
      await race(account.id, key.id, 10, 'insufficient_credit');
    });

    it(`reserveCredit - ${RACERS} concurrent reserves against a key cap of 10 worst cases: exactly 10 hold`, async () => {
      const { account, key } = await meteredAccount(ctx.storage, {
        balanceMicros: 1_000_000_000,
        spendLimitMicros: 10 * WORST,
      });
      await race(account.id, key.id, 10, 'key_limit_exceeded');
    });

    it(`reserveCredit - ${RACERS} concurrent reserves against a monthly ceiling with room for 10 worst cases: exactly 10 hold`, async () => {
      const { account, key } = await meteredAccount(ctx.storage, {
        balanceMicros: 1_000_000_000,
        monthlyLimitMicros: 12 * WORST,
      });
      await ctx.storage.appendLedgerEntries(account.id, [charge(2 * WORST)]);
      await race(account.id, key.id, 10, 'monthly_limit_exceeded');
    });
  });
}
