import {
  type CreditReservation,
  type EpochMs,
  type Micros,
  newId,
  type ReserveCreditInput,
  type ReserveCreditResult,
} from '@tollgate/core';
import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import { chargesFromSum, monthToDateChargesQuery } from './ledger-queries.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { mapReservation, toInteger, toNullableInteger } from './row-mappers.js';

/**
 * `Storage.reserveCredit`. One write transaction that first locks the account row (Postgres:
 * `SELECT … FOR UPDATE`; SQLite: the transaction already holds the write lock). Settles and ledger
 * appends of the account take the same lock, so the balance, the live holds, the key's spend and
 * the month's charges read here cannot change before the hold is inserted: N concurrent reserves
 * can never together hold more than a limit allows. A key always belongs to one account, so the
 * account's lock covers its key's holds and spend too.
 */
export async function reserveCredit(
  ctx: QueryContext,
  input: ReserveCreditInput,
): Promise<ReserveCreditResult> {
  assertInteger('amountMicros', input.amountMicros);
  if (input.amountMicros < 0) throw new RangeError('a reservation amount cannot be negative');
  assertInteger('now', input.now);
  assertInteger('ttlMs', input.ttlMs);
  if (input.ttlMs <= 0) throw new RangeError('a reservation ttlMs must be positive');
  const { accountId, keyId, amountMicros: amount, now } = input;

  return write(ctx, async (trx) => {
    // The key joined to its account, locking only the account row (the lock every writer of the
    // account takes first).
    const limits = await trx
      .selectFrom('accounts as a')
      .innerJoin('api_keys as k', 'k.account_id', 'a.id')
      .select(['a.balance_micros', 'a.monthly_limit_micros', 'k.spent_micros', 'k.spend_limit_micros'])
      .where('a.id', '=', accountId)
      .where('k.id', '=', keyId)
      .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate(['a']))
      .executeTakeFirst();
    if (!limits) throw await missingAccountOrKey(trx, accountId, keyId);

    const balance = toInteger(limits.balance_micros);
    const monthlyLimit = toNullableInteger(limits.monthly_limit_micros);
    // After the lock, in a statement of its own: on Postgres a statement sees what was committed
    // when it began, so only a read that starts once the lock is held sees the holds and charges of
    // the writer it waited for.
    const held = await liveHoldsAndMonth(trx, accountId, keyId, now, monthlyLimit !== null);
    const refuse = (reason: Refusal['reason'], availableMicros: Micros): Refusal => ({
      ok: false,
      reason,
      balanceMicros: balance,
      availableMicros,
    });

    if (balance - held.account < amount) return refuse('insufficient_credit', balance - held.account);
    const keyLimit = toNullableInteger(limits.spend_limit_micros);
    if (keyLimit !== null) {
      const keyAvailable = keyLimit - toInteger(limits.spent_micros) - held.key;
      if (amount > keyAvailable) return refuse('key_limit_exceeded', keyAvailable);
    }
    if (monthlyLimit !== null) {
      const monthAvailable = monthlyLimit - held.monthCharges - held.account;
      if (amount > monthAvailable) return refuse('monthly_limit_exceeded', monthAvailable);
    }

    const row = await trx
      .insertInto('credit_reservations')
      .values({
        id: newId('res'),
        account_id: accountId,
        key_id: keyId,
        request_id: input.requestId,
        amount_micros: amount,
        created_at: now,
        expires_at: now + input.ttlMs,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { ok: true, reservation: mapReservation(row) };
  });
}

type Refusal = Extract<ReserveCreditResult, { ok: false }>;

/** The error of a reserve whose account, or whose key in that account, does not exist. */
async function missingAccountOrKey(db: Kysely<Database>, accountId: string, keyId: string): Promise<Error> {
  const account = await db.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
  return account
    ? new Error(`key ${keyId} is not a key of account ${accountId}`)
    : new Error(`account ${accountId} does not exist`);
}

/**
 * Σ live holds (`expires_at > now`) of the account, and of one of its keys, and (when asked) the
 * month-to-date charges of the account, in one read.
 */
async function liveHoldsAndMonth(
  db: Kysely<Database>,
  accountId: string,
  keyId: string,
  now: EpochMs,
  withMonth: boolean,
): Promise<{ account: Micros; key: Micros; monthCharges: Micros }> {
  const row = await db
    .selectFrom('credit_reservations')
    .select((eb) => [
      eb.fn.coalesce(eb.fn.sum('amount_micros'), sql.lit(0)).as('account'),
      eb.fn
        .coalesce(
          eb.fn.sum(
            eb.case().when('key_id', '=', keyId).then(eb.ref('amount_micros')).else(sql.lit(0)).end(),
          ),
          sql.lit(0),
        )
        .as('key'),
      (withMonth ? monthToDateChargesQuery(db, accountId, now) : sql.lit(0)).as('month'),
    ])
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return {
    account: toInteger(row.account),
    key: toInteger(row.key),
    monthCharges: withMonth ? chargesFromSum(toInteger(row.month)) : 0,
  };
}

/** `Storage.releaseReservation`: a delete by id; a missing hold is not an error. */
export async function releaseReservation(ctx: QueryContext, reservationId: string): Promise<void> {
  await write(ctx, (trx) => trx.deleteFrom('credit_reservations').where('id', '=', reservationId).execute());
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
