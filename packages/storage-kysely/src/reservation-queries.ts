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
import { monthToDateCharges } from './ledger-queries.js';
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
    const account = await trx
      .selectFrom('accounts')
      .select(['balance_micros', 'monthly_limit_micros'])
      .where('id', '=', accountId)
      .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate())
      .executeTakeFirst();
    if (!account) throw new Error(`account ${accountId} does not exist`);
    const key = await trx
      .selectFrom('api_keys')
      .select(['spent_micros', 'spend_limit_micros'])
      .where('id', '=', keyId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!key) throw new Error(`key ${keyId} is not a key of account ${accountId}`);

    const balance = toInteger(account.balance_micros);
    const held = await liveHolds(trx, accountId, keyId, now);
    const refuse = (reason: Refusal['reason'], availableMicros: Micros): Refusal => ({
      ok: false,
      reason,
      balanceMicros: balance,
      availableMicros,
    });

    if (balance - held.account < amount) return refuse('insufficient_credit', balance - held.account);
    const keyLimit = toNullableInteger(key.spend_limit_micros);
    if (keyLimit !== null) {
      const keyAvailable = keyLimit - toInteger(key.spent_micros) - held.key;
      if (amount > keyAvailable) return refuse('key_limit_exceeded', keyAvailable);
    }
    const monthlyLimit = toNullableInteger(account.monthly_limit_micros);
    if (monthlyLimit !== null) {
      const monthAvailable = monthlyLimit - (await monthToDateCharges(trx, accountId, now)) - held.account;
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

/** Σ live holds (`expires_at > now`) of the account, and of one of its keys, in one read. */
async function liveHolds(
  db: Kysely<Database>,
  accountId: string,
  keyId: string,
  now: EpochMs,
): Promise<{ account: Micros; key: Micros }> {
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
    ])
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return { account: toInteger(row.account), key: toInteger(row.key) };
}

/** `Storage.releaseReservation`: a delete by id; a missing hold is not an error. */
export async function releaseReservation(ctx: QueryContext, reservationId: string): Promise<void> {
  await write(ctx, (trx) => trx.deleteFrom('credit_reservations').where('id', '=', reservationId).execute());
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
