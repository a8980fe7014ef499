import { describe, expect, it } from 'vitest';
import { meteredAccount, mustReserve, requestRecord, reserveInput } from './metering-fixtures.js';
import { rawOne, sqlText } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/**
 * The record a reserve writes with its hold (`in_progress`), completed by the settle, and closed by
 * the sweep when its process died: so a crash mid-request never leaves a request without a trace.
 */
export function requestInProgressCases(ctx: ConformanceContext): void {
  /** A reserve that writes the request's record with its hold. */
  async function heldWithRecord(overrides: { now?: number; ttlMs?: number } = {}) {
    const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 100_000 });
    const input = reserveInput(account.id, key.id, 5_000, overrides);
    const record = requestRecord(account.id, { id: input.requestId, keyId: key.id, httpStatus: 0 });
    const hold = await mustReserve(ctx.storage, { ...input, record });
    return { account, key, hold, record };
  }

  /** The record was closed as an uncharged `internal_error` saying `why`, and the account has no charge. */
  async function expectClosedUncharged(accountId: string, requestId: string, why: RegExp) {
    const closed = await ctx.storage.getRequestRecord(accountId, requestId);
    expect(closed).toMatchObject({
      status: 'error',
      httpStatus: 500,
      errorCode: 'internal_error',
      costMicros: 0,
    });
    expect(closed?.errorMessage).toMatch(why);
    expect((await ctx.storage.listLedgerEntries(accountId)).some((e) => e.kind === 'charge')).toBe(false);
  }

  describe('request records in progress', () => {
    it('reserveCredit - with a record: writes it as in_progress in the same transaction as the hold (raw too)', async () => {
      const { account, record } = await heldWithRecord();

      const stored = await ctx.storage.getRequestRecord(account.id, record.id);
      expect(stored).toEqual({ ...record, status: 'in_progress' });
      const raw = await rawOne(ctx, `SELECT status FROM request_records WHERE id = ${sqlText(record.id)}`);
      expect(raw.status).toBe('in_progress');
    });

    it('reserveCredit - a refused reserve writes no record', async () => {
      const { account, key } = await meteredAccount(ctx.storage, { balanceMicros: 10 });
      const input = reserveInput(account.id, key.id, 5_000);
      const result = await ctx.storage.reserveCredit({
        ...input,
        record: requestRecord(account.id, { id: input.requestId }),
      });
      expect(result.ok).toBe(false);
      expect(await ctx.storage.getRequestRecord(account.id, input.requestId)).toBeNull();
    });

    it('reserveCredit - a second reserve of the same request id takes over its in_progress record (its process died), never a finished one', async () => {
      const { account, key, hold, record } = await heldWithRecord();
      const input = { ...reserveInput(account.id, key.id, 5_000), requestId: record.id };
      const again = await mustReserve(ctx.storage, { ...input, record: { ...record, model: 'second-run' } });
      expect(again.id).not.toBe(hold.id);
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual({
        ...record,
        model: 'second-run',
        status: 'in_progress',
      });

      const finished = { ...record, status: 'success' as const, httpStatus: 200, costMicros: 1_234 };
      const charge = { amountMicros: 1_234, description: 'm: 1 in, 2 out', keyId: key.id };
      await ctx.storage.settleRequest({ reservationId: again.id, record: finished, charge });
      await expect(ctx.storage.reserveCredit({ ...input, record })).rejects.toThrow();
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(finished);
    });

    it('settleRequest - completes the in_progress record, and a second settle is still rejected', async () => {
      const { account, key, hold, record } = await heldWithRecord();
      const finished = { ...record, status: 'success' as const, httpStatus: 200, costMicros: 1_234 };
      const charge = { amountMicros: 1_234, description: 'm: 1 in, 2 out', keyId: key.id };

      await ctx.storage.settleRequest({ reservationId: hold.id, record: finished, charge });

      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(finished);
      await expect(
        ctx.storage.settleRequest({ reservationId: hold.id, record: finished, charge }),
      ).rejects.toThrow();
      expect(
        (await ctx.storage.listLedgerEntries(account.id)).filter((e) => e.kind === 'charge'),
      ).toHaveLength(1);
    });

    it('insertRequestRecord - replaces an in_progress record (a failed settle), but never a finished one', async () => {
      const { account, record } = await heldWithRecord();
      const failed = { ...record, status: 'error' as const, httpStatus: 500, errorCode: 'internal_error' };

      await ctx.storage.insertRequestRecord(failed);
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(failed);

      await expect(ctx.storage.insertRequestRecord({ ...failed, status: 'success' })).rejects.toThrow();
      expect(await ctx.storage.getRequestRecord(account.id, record.id)).toEqual(failed);
    });

    it('insertRequestRecord - another account cannot overwrite an in_progress record by its id', async () => {
      const { account, record } = await heldWithRecord();
      const other = await ctx.storage.createAccount({ name: 'other' });

      await expect(
        ctx.storage.insertRequestRecord({ ...record, accountId: other.id, status: 'error' }),
      ).rejects.toThrow();
      expect((await ctx.storage.getRequestRecord(account.id, record.id))?.status).toBe('in_progress');
    });

    it('sweepExpired - closes an in_progress record whose hold expired as an uncharged internal_error, and leaves a live one', async () => {
      const now = Date.now();
      const dead = await heldWithRecord({ now: now - 2_000, ttlMs: 1_000 });
      const live = await heldWithRecord({ now, ttlMs: 60_000 });

      await ctx.storage.sweepExpired(now);

      await expectClosedUncharged(dead.account.id, dead.record.id, /stopped before this request finished/);
      expect((await ctx.storage.getRequestRecord(live.account.id, live.record.id))?.status).toBe(
        'in_progress',
      );
    });

    it('sweepExpired - closes the record of an expired hold when a later reserve of the same request expired too', async () => {
      const now = Date.now();
      const dead = await heldWithRecord({ now: now - 5_000, ttlMs: 1_000 });
      const input = reserveInput(dead.account.id, dead.key.id, 5_000, { now: now - 3_000, ttlMs: 1_000 });
      await mustReserve(ctx.storage, { ...input, requestId: dead.record.id, record: dead.record });

      await ctx.storage.sweepExpired(now);
      expect((await ctx.storage.getRequestRecord(dead.account.id, dead.record.id))?.status).toBe('error');
      expect(await ctx.storage.listReservations(dead.account.id, now - 10_000)).toEqual([]);
      expect((await ctx.storage.getRequestRecord(dead.account.id, dead.record.id))?.errorMessage).toMatch(
        /stopped before this request finished/,
      );
    });

    it("releaseReservation - closes the hold's in_progress record as an uncharged internal_error (a settle that failed and whose failure could not be written)", async () => {
      const { account, hold, record } = await heldWithRecord();

      await ctx.storage.releaseReservation(hold.id);

      await expectClosedUncharged(account.id, record.id, /could not settle this request/);
      const raw = await rawOne(ctx, `SELECT status FROM request_records WHERE id = ${sqlText(record.id)}`);
      expect(raw.status).toBe('error');
    });

    it('releaseReservation - leaves the failure the caller wrote first, and a record another hold of the same request covers', async () => {
      const first = await heldWithRecord();
      const failed = {
        ...first.record,
        status: 'error' as const,
        httpStatus: 500,
        errorCode: 'internal_error',
      };
      await ctx.storage.insertRequestRecord(failed);
      await ctx.storage.releaseReservation(first.hold.id);
      expect(await ctx.storage.getRequestRecord(first.account.id, first.record.id)).toEqual(failed);

      const second = await heldWithRecord();
      const input = reserveInput(second.account.id, second.key.id, 5_000);
      const again = await mustReserve(ctx.storage, {
        ...input,
        requestId: second.record.id,
        record: second.record,
      });
      await ctx.storage.releaseReservation(second.hold.id);
      expect((await ctx.storage.getRequestRecord(second.account.id, second.record.id))?.status).toBe(
        'in_progress',
      );
      await ctx.storage.releaseReservation(again.id);
      expect((await ctx.storage.getRequestRecord(second.account.id, second.record.id))?.status).toBe('error');
    });

    it('listUsage - does not count a request still in progress', async () => {
      const { account, record } = await heldWithRecord();
      expect(await ctx.storage.listUsage(account.id, record.createdAt - 1)).toEqual([]);
    });
  });
}
