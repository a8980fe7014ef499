import { describe, expect, it } from 'vitest';
import type { SettleCharge } from '../storage/metering-types.js';
import { charge as chargeEntry, expectRecentEpochMs } from './fixtures.js';
import {
  concurrently,
  meteredAccount,
  mustReserve,
  requestRecord,
  reserveInput,
} from './metering-fixtures.js';
import { rawBalance, rawCount, rawLedgerSum, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const SETTLERS = 50;

export function settleCases(ctx: ConformanceContext): void {
  const ledgerCount = (accountId: string) =>
    rawCount(ctx, 'ledger_entries', `account_id = ${sqlText(accountId)}`);
  const holdCount = (accountId: string) =>
    rawCount(ctx, 'credit_reservations', `account_id = ${sqlText(accountId)}`);
  const keySpent = async (keyId: string) =>
    toNumber(
      (await rawOne(ctx, `SELECT spent_micros FROM api_keys WHERE id = ${sqlText(keyId)}`)).spent_micros,
    );

  /** A funded account with a key and a live hold of 5 000 for one request. */
  async function heldRequest(balanceMicros = 100_000) {
    const { account, key } = await meteredAccount(ctx.storage, { balanceMicros });
    const hold = await mustReserve(ctx.storage, reserveInput(account.id, key.id, 5_000));
    const record = requestRecord(account.id, { id: hold.requestId, keyId: key.id, costMicros: 1_234 });
    const charge: SettleCharge = {
      amountMicros: 1_234,
      description: 'openai/gpt-4o-mini: 10 in, 20 out',
      keyId: key.id,
    };
    return { account, key, hold, record, charge };
  }

  describe('settleRequest', () => {
    it('settleRequest - with a charge: one ledger entry with the request id, balance and key spend moved, hold gone, record stored', async () => {
      const { account, key, hold, record, charge } = await heldRequest();
      const spendBefore = await ctx.storage.getMonthToDateSpend(account.id, Date.now());

      const result = await ctx.storage.settleRequest({ reservationId: hold.id, record, charge });

      expect(result).toEqual({ balanceMicros: 100_000 - 1_234 });
      const entries = await ctx.storage.listLedgerEntries(account.id);
      expect(entries).toHaveLength(2);
      expect(entries[1]).toEqual({
        id: expect.stringMatching(/^led_/),
        accountId: account.id,
        amountMicros: -1_234,
        balanceAfterMicros: 100_000 - 1_234,
        kind: 'charge',
        description: charge.description,
        requestId: record.id,
        keyId: key.id,
        createdAt: expect.any(Number),
      });
      expect(expectRecentEpochMs(entries[1]!.createdAt)).toBe(true);
      const row = await rawOne(
        ctx,
        `SELECT * FROM ledger_entries WHERE request_id = ${sqlText(record.id)} AND kind = 'charge'`,
      );
      expect(toNumber(row.amount_micros)).toBe(-1_234);
      expect(await rawBalance(ctx, account.id)).toBe(100_000 - 1_234);
      expect(await rawLedgerSum(ctx, account.id)).toBe(100_000 - 1_234);
      expect(await keySpent(key.id)).toBe(1_234);
      expect((await ctx.storage.getApiKey(account.id, key.id))?.spentMicros).toBe(1_234);
      expect(await ctx.storage.getMonthToDateSpend(account.id, Date.now())).toBe(spendBefore + 1_234);
      expect(await holdCount(account.id)).toBe(0);
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(record);
    });

    it('settleRequest - a charge capped at its hold: one entry of the hold, the record keeps what was not charged', async () => {
      const { account, hold, record } = await heldRequest();
      const capped = { ...record, costMicros: 5_000, overrunMicros: 9_007_199_254_735_991 };
      const charge: SettleCharge = { amountMicros: 5_000, description: 'capped', keyId: record.keyId };

      await ctx.storage.settleRequest({ reservationId: hold.id, record: capped, charge });

      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(capped);
      const row = await rawOne(
        ctx,
        `SELECT overrun_micros FROM request_records WHERE id = ${sqlText(record.id)}`,
      );
      expect(toNumber(row.overrun_micros)).toBe(9_007_199_254_735_991);
      expect(await rawBalance(ctx, account.id)).toBe(100_000 - 5_000);
    });

    it('settleRequest - without a charge: no ledger entry, the record stored, the hold gone, the balance returned', async () => {
      const { account, key, hold, record } = await heldRequest();
      const failed = { ...record, status: 'error' as const, httpStatus: 502, costMicros: 0 };

      expect(
        await ctx.storage.settleRequest({ reservationId: hold.id, record: failed, charge: null }),
      ).toEqual({
        balanceMicros: 100_000,
      });

      expect(await ledgerCount(account.id)).toBe(1);
      expect(await rawBalance(ctx, account.id)).toBe(100_000);
      expect(await keySpent(key.id)).toBe(0);
      expect(await holdCount(account.id)).toBe(0);
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(failed);
    });

    it('settleRequest - without a hold (reservationId null) still charges and records', async () => {
      const { account, hold, record, charge } = await heldRequest();

      await ctx.storage.settleRequest({ reservationId: null, record, charge });

      expect(await rawBalance(ctx, account.id)).toBe(100_000 - 1_234);
      // The request's own hold is untouched: it was not named.
      expect(await ctx.storage.listReservations(account.id, Date.now())).toEqual([hold]);
    });

    it('settleRequest - a second settle of the same request id is rejected and charges nothing more', async () => {
      const { account, key, hold, record, charge } = await heldRequest();
      await ctx.storage.settleRequest({ reservationId: hold.id, record, charge });

      await expect(ctx.storage.settleRequest({ reservationId: null, record, charge })).rejects.toThrow();
      const again = await mustReserve(ctx.storage, reserveInput(account.id, key.id, 5_000));
      await expect(
        ctx.storage.settleRequest({ reservationId: again.id, record: { ...record, costMicros: 99 }, charge }),
      ).rejects.toThrow();

      expect(await rawCount(ctx, 'ledger_entries', `request_id = ${sqlText(record.id)}`)).toBe(1);
      expect(await rawCount(ctx, 'request_records', `id = ${sqlText(record.id)}`)).toBe(1);
      expect(await rawBalance(ctx, account.id)).toBe(100_000 - 1_234);
      expect(await keySpent(key.id)).toBe(1_234);
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(record);
      // The failed settle rolled back its hold release too.
      expect(await ctx.storage.listReservations(account.id, Date.now())).toEqual([again]);
    });

    it('settleRequest - a settle that fails halfway leaves no ledger entry, the balance and key spend unchanged, and the hold releasable', async () => {
      const { account, key, hold, record, charge } = await heldRequest();
      // The record id is taken already, so the last step (the record insert) fails after the charge.
      await ctx.storage.insertRequestRecord({ ...record, status: 'refused', httpStatus: 429 });

      await expect(ctx.storage.settleRequest({ reservationId: hold.id, record, charge })).rejects.toThrow();

      expect(await ledgerCount(account.id)).toBe(1);
      expect(await rawCount(ctx, 'ledger_entries', `request_id = ${sqlText(record.id)}`)).toBe(0);
      expect(await rawBalance(ctx, account.id)).toBe(100_000);
      expect(await keySpent(key.id)).toBe(0);
      expect((await ctx.storage.getRequestRecord(account.id, record.id))?.status).toBe('refused');
      expect(await ctx.storage.listReservations(account.id, Date.now())).toEqual([hold]);
      await ctx.storage.releaseReservation(hold.id);
      expect(await holdCount(account.id)).toBe(0);
    });

    it('settleRequest - rejects a charge that is zero, negative or not an integer, and writes nothing', async () => {
      const { account, hold, record, charge } = await heldRequest();

      for (const amountMicros of [0, -5, 1.5]) {
        await expect(
          ctx.storage.settleRequest({ reservationId: hold.id, record, charge: { ...charge, amountMicros } }),
        ).rejects.toThrow();
      }

      expect(await ledgerCount(account.id)).toBe(1);
      expect(await rawCount(ctx, 'request_records')).toBe(0);
      expect(await holdCount(account.id)).toBe(1);
    });

    it('settleRequest - rejects an account that does not exist', async () => {
      const record = requestRecord('acct_missing');
      await expect(
        ctx.storage.settleRequest({ reservationId: null, record, charge: null }),
      ).rejects.toThrow();
      expect(await rawCount(ctx, 'request_records')).toBe(0);
    });

    it('ledger - the database refuses a second charge entry for a request that was charged already', async () => {
      const { account, hold, record, charge } = await heldRequest();
      await ctx.storage.settleRequest({ reservationId: hold.id, record, charge });

      await expect(
        ctx.storage.appendLedgerEntries(account.id, [{ ...chargeEntry(10), requestId: record.id }]),
      ).rejects.toThrow();
      // Other kinds may name the request (a correction is a new entry of opposite sign).
      await ctx.storage.appendLedgerEntries(account.id, [
        { amountMicros: 1_234, kind: 'adjustment', description: 'refund', requestId: record.id },
      ]);
      expect(await rawCount(ctx, 'ledger_entries', `request_id = ${sqlText(record.id)}`)).toBe(2);
    });
  });

  describe('settleRequest under concurrency', () => {
    it(`settleRequest - balance == Σ ledger after ${SETTLERS} concurrent reserve-and-settle requests (half through a second storage when there is one)`, async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10_000_000 });
      const amount = (i: number) => 1_000 + i * 7;

      const balances = await concurrently(ctx, SETTLERS, async (storage, i) => {
        const hold = await mustReserve(storage, reserveInput(account.id, key.id, 50_000));
        const record = requestRecord(account.id, {
          id: hold.requestId,
          keyId: key.id,
          costMicros: amount(i),
        });
        const charge = { amountMicros: amount(i), description: `request ${i}`, keyId: key.id };
        return (await storage.settleRequest({ reservationId: hold.id, record, charge })).balanceMicros;
      });

      const total = Array.from({ length: SETTLERS }, (_, i) => amount(i)).reduce((a, b) => a + b, 0);
      const expected = 10_000_000 - total;
      expect(Math.min(...balances)).toBe(expected);
      expect(new Set(balances).size).toBe(SETTLERS);
      expect(await rawBalance(ctx, account.id)).toBe(expected);
      expect(await rawLedgerSum(ctx, account.id)).toBe(expected);
      expect(await ledgerCount(account.id)).toBe(1 + SETTLERS);
      expect(await rawCount(ctx, 'request_records')).toBe(SETTLERS);
      expect(await keySpent(key.id)).toBe(total);
      expect(await holdCount(account.id)).toBe(0);
    });
  });
}
