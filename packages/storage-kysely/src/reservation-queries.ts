import {
  type CreditReservation,
  type EpochMs,
  limitWindow,
  type Micros,
  newId,
  type ReserveCreditInput,
  type ReserveCreditResult,
} from '@tollgate/core';
import type { Kysely } from 'kysely';
import { accountExists } from './account-queries.js';
import type { CreditReservationsTable, Database } from './database.js';
import { chargesFromSum } from './ledger-queries.js';
import { readHolds } from './live-holds-queries.js';
import { columnsOf, type InsertRow, prepareQuery, valuesOf } from './prepared-query.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { countHitIn, hitParams, refusedHit } from './rate-limit-queries.js';
import { writeRecord } from './request-record-queries.js';
import { mapReservation, requestRecordRow, toInteger, toNullableInteger } from './row-mappers.js';
import { closeUncoveredRecords, UNSETTLED_MESSAGE } from './sweep-queries.js';
import { utcMonthContaining } from './utc-month.js';

/**
 * `Storage.reserveCredit`. One write transaction that first locks the account row (Postgres:
 * `SELECT … FOR UPDATE`; SQLite: the transaction already holds the write lock). Settles and ledger
 * appends of the account take the same lock, so the balance, the live holds, the key's spend and
 * the month's charges read here cannot change before the hold is inserted (a capped key with a
 * `limit_reset`: its holds and day spend of the current window instead): N concurrent reserves
 * can never together hold more than a limit allows. A key always belongs to one account, so the
 * account's lock covers its key's holds and spend too. A reserve that carries the request's
 * rate-limit hit counts it first, in the same transaction, and holds nothing when it is refused.
 * Where the adapter brings its own metering path (Postgres), the same rule runs as SQL instead, in
 * one round trip: `tollgate_reserve_batch` for a batch, `tollgate_reserve_credit` for a call alone
 * (storage-postgres's `sql/functions/`). `test/metering-differential.test.ts` runs both on the same
 * random operations and requires the same answers and the same state.
 */
export async function reserveCredit(
  ctx: QueryContext,
  input: ReserveCreditInput,
): Promise<ReserveCreditResult> {
  checkReserveInput(input);
  const { accountId, keyId, amountMicros: amount, now } = input;
  const hit = input.rateLimit ? hitParams(input.rateLimit) : null;

  const result = await write(ctx, async (trx): Promise<ReserveCreditResult | typeof HIT_REFUSED> => {
    // The request's rate-limit hit first, in the same transaction (before the account's lock, as
    // the native batch counts it).
    if (hit && !(await countHitIn(ctx, hit, trx))) return HIT_REFUSED;
    // The key joined to its account, locking only the account row (the lock every writer of the
    // account takes first).
    const limits = await accountAndKeyLimits.first(ctx, { accountId, keyId }, trx);
    if (!limits) throw await missingAccountOrKey(trx, accountId, keyId);

    const balance = toInteger(limits.balance_micros);
    const monthlyLimit = toNullableInteger(limits.monthly_limit_micros);
    // After the lock, in a statement of its own: on Postgres a statement sees what was committed
    // when it began, so only a read that starts once the lock is held sees the holds and charges of
    // the writer it waited for.
    // A capped key with a limit window: its holds and spend are those of the window containing `now`.
    const reset = limits.spend_limit_micros === null ? null : limits.limit_reset;
    const held = await readHolds(ctx, trx, {
      accountId,
      keyId,
      now,
      monthStart: monthlyLimit === null ? null : utcMonthContaining(now).start,
      windowStart: reset === null ? null : limitWindow(reset, now).start,
    });
    if (!held) throw new Error('the live-holds read returned no row');
    const heldAccount = toInteger(held.account);
    const heldKey = toInteger(held.key);
    const refuse = (reason: Refusal['reason'], availableMicros: Micros): Refusal => ({
      ok: false,
      reason,
      balanceMicros: balance,
      availableMicros,
    });

    if (balance - heldAccount < amount) return refuse('insufficient_credit', balance - heldAccount);
    const keyLimit = toNullableInteger(limits.spend_limit_micros);
    if (keyLimit !== null) {
      const keyAvailable = keyLimit - toInteger(held.key_spent) - heldKey;
      if (amount > keyAvailable) return refuse('key_limit_exceeded', keyAvailable);
    }
    if (monthlyLimit !== null) {
      const monthAvailable = monthlyLimit - chargesFromSum(toInteger(held.month)) - heldAccount;
      if (amount > monthAvailable) return refuse('monthly_limit_exceeded', monthAvailable);
    }

    const row = await insertHold.first(
      ctx,
      {
        id: newId('res'),
        account_id: accountId,
        key_id: keyId,
        request_id: input.requestId,
        amount_micros: amount,
        created_at: now,
        expires_at: now + input.ttlMs,
      },
      trx,
    );
    if (!row) throw new Error('the hold insert returned no row');
    if (input.record) {
      // Over the same request's `in_progress` record if one was left by a process that died mid-call
      // (a batch item runs again under its request id); never over a finished one.
      await writeRecord(ctx, requestRecordRow({ ...input.record, status: 'in_progress' }, ctx.dialect), trx);
    }
    return { ok: true, reservation: mapReservation(row) };
  });
  return result === HIT_REFUSED ? rateLimited(ctx, input) : result;
}

/** What a reserve whose rate-limit hit was not counted answers (it held nothing). */
const HIT_REFUSED = Symbol('rate-limit hit refused');

/** The `rate_limited` answer of a reserve whose hit was refused, with the hit's `retryAfterMs`. */
export async function rateLimited(
  ctx: QueryContext,
  input: ReserveCreditInput,
): Promise<ReserveCreditResult> {
  if (!input.rateLimit) throw new Error('a reserve without a rate-limit hit cannot be refused for one');
  const { retryAfterMs } = await refusedHit(ctx, input.rateLimit);
  return { ok: false, reason: 'rate_limited', retryAfterMs };
}

/** Throws on an amount, clock or TTL no reserve accepts (the native reserve checks the same). */
export function checkReserveInput(input: ReserveCreditInput): void {
  assertInteger('amountMicros', input.amountMicros);
  if (input.amountMicros < 0) throw new RangeError('a reservation amount cannot be negative');
  assertInteger('now', input.now);
  assertInteger('ttlMs', input.ttlMs);
  if (input.ttlMs <= 0) throw new RangeError('a reservation ttlMs must be positive');
}

/** The account's balance and monthly ceiling with the key's spend and cap; locks the account row. */
const accountAndKeyLimits = prepareQuery((db, p: { accountId: string; keyId: string }, dialect) =>
  db
    .selectFrom('accounts as a')
    .innerJoin('api_keys as k', 'k.account_id', 'a.id')
    .select(['a.balance_micros', 'a.monthly_limit_micros', 'k.spend_limit_micros', 'k.limit_reset'])
    .where('a.id', '=', p.accountId)
    .where('k.id', '=', p.keyId)
    .$if(dialect.selectForUpdate, (qb) => qb.forUpdate(['a'])),
);

/** Inserts one hold (every column given), returning it. */
const insertHold = prepareQuery((db, row: InsertRow<CreditReservationsTable>) =>
  db.insertInto('credit_reservations').values(valuesOf(row, HOLD_COLUMNS)).returningAll(),
);
const HOLD_COLUMNS = columnsOf<CreditReservationsTable>()({
  id: true,
  account_id: true,
  key_id: true,
  request_id: true,
  amount_micros: true,
  created_at: true,
  expires_at: true,
});

export type Refusal = Extract<ReserveCreditResult, { ok: false; balanceMicros: Micros }>;

/** The error of a reserve whose account, or whose key in that account, does not exist. */
async function missingAccountOrKey(db: Kysely<Database>, accountId: string, keyId: string): Promise<Error> {
  return (await accountExists(db, accountId))
    ? new Error(`key ${keyId} is not a key of account ${accountId}`)
    : new Error(`account ${accountId} does not exist`);
}

/**
 * `Storage.releaseReservation`, in one write transaction: deletes the hold (a missing one is not
 * an error) and closes its request's record if that is still `in_progress` and no other hold
 * covers the request (a later reserve of the same request id). A hold is released when its
 * settle failed and the caller wrote the failure first, so the record is normally closed
 * already; this closes it when that write failed too, as the sweep once found such records by a
 * scan of the records in progress (see `sweepExpired`).
 */
export async function releaseReservation(ctx: QueryContext, reservationId: string): Promise<void> {
  await write(ctx, async (trx) => {
    const released = await trx
      .deleteFrom('credit_reservations')
      .where('id', '=', reservationId)
      .returning('request_id')
      .executeTakeFirst();
    const requestId = released?.request_id;
    if (!requestId) return;
    await closeUncoveredRecords(trx, UNSETTLED_MESSAGE, null).where('id', '=', requestId).execute();
  });
}

/**
 * `Storage.extendReservation`: moves a live hold's expiry to `expiresAt` (never earlier). Returns
 * false when the hold is gone (settled, released or already expired), which the caller cannot undo.
 */
export async function extendReservation(
  ctx: QueryContext,
  reservationId: string,
  now: EpochMs,
  expiresAt: EpochMs,
): Promise<boolean> {
  assertInteger('now', now);
  assertInteger('expiresAt', expiresAt);
  const result = await write(ctx, (trx) =>
    trx
      .updateTable('credit_reservations')
      .set({ expires_at: expiresAt })
      .where('id', '=', reservationId)
      .where('expires_at', '>', now)
      .where('expires_at', '<', expiresAt)
      .executeTakeFirst(),
  );
  if (Number(result.numUpdatedRows) > 0) return true;
  // Already at or past `expiresAt` counts as extended; only a missing or expired hold is false.
  const row = await ctx.db
    .selectFrom('credit_reservations')
    .select('id')
    .where('id', '=', reservationId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/** `Storage.listReservations`: the account's live holds, oldest first. */
export async function listReservations(
  ctx: QueryContext,
  accountId: string,
  now: EpochMs,
): Promise<CreditReservation[]> {
  const rows = await ctx.db
    .selectFrom('credit_reservations')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(mapReservation);
}
