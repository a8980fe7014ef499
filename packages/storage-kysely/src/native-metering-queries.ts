import {
  type Micros,
  newId,
  type ReserveCreditInput,
  type ReserveCreditResult,
  type SettleInput,
} from '@tollgate/core';
import { CompiledQuery } from 'kysely';
import type { QueryContext } from './query-context.js';
import { checkReserveInput, type Refusal } from './reservation-queries.js';
import { mapReservation, type RecordRow, requestRecordRow, toInteger } from './row-mappers.js';
import { checkCharge } from './settle-queries.js';
import { utcMonthContaining } from './utc-month.js';

/*
 * `reserveCredit` and `settleRequest` where the dialect runs them natively
 * (`DialectCapabilities.nativeReserveAndSettle`, Postgres): one statement each, calling the
 * functions of migration 0010, which do what `reservation-queries.ts` and `settle-queries.ts` do in
 * their transactions. One statement outside a transaction is its own transaction, so each is one
 * round trip, and any error inside rolls all of it back. The checks of the input, the ids and the
 * clock stay here, as in the kysely path; the fixed SQL text runs as a named prepared statement
 * where the adapter prepares them (`PreparingClient`).
 */

const RESERVE_SQL =
  'select refusal, balance, available from tollgate_reserve_credit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)';

/** `Storage.reserveCredit` in one round trip. */
export async function reserveCreditNatively(
  ctx: QueryContext,
  input: ReserveCreditInput,
): Promise<ReserveCreditResult> {
  checkReserveInput(input);
  const { accountId, keyId, amountMicros, now } = input;
  const month = utcMonthContaining(now);
  const hold = {
    id: newId('res'),
    account_id: accountId,
    key_id: keyId,
    request_id: input.requestId,
    amount_micros: amountMicros,
    created_at: now,
    expires_at: now + input.ttlMs,
  };
  const record = input.record
    ? recordJson(requestRecordRow({ ...input.record, status: 'in_progress' }, ctx.dialect))
    : null;
  const { rows } = await ctx.db.executeQuery<{
    refusal: string | null;
    balance: unknown;
    available: unknown;
  }>(
    CompiledQuery.raw(RESERVE_SQL, [
      accountId,
      keyId,
      amountMicros,
      now,
      month.start,
      month.end,
      hold.id,
      hold.request_id,
      hold.expires_at,
      record,
    ]),
  );
  const row = rows[0];
  if (!row) throw new Error('tollgate_reserve_credit returned no row');
  if (row.refusal !== null) {
    return {
      ok: false,
      reason: row.refusal as Refusal['reason'],
      balanceMicros: toInteger(row.balance),
      availableMicros: toInteger(row.available),
    };
  }
  return { ok: true, reservation: mapReservation(hold) };
}

/**
 * A record row as the functions' `jsonb` parameter. A lone UTF-16 surrogate becomes U+FFFD first, as
 * the driver's UTF-8 encoding of a text parameter makes it on the kysely path: `jsonb` would refuse
 * its `\udXXX` escape, failing (and so not charging) the settle of a record that names one.
 */
function recordJson(row: RecordRow): string {
  return JSON.stringify(row, (_, value) =>
    typeof value === 'string' ? value.replace(LONE_SURROGATE, '\uFFFD') : value,
  );
}
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const SETTLE_SQL = 'select balance from tollgate_settle_request($1::jsonb, $2, $3, $4, $5, $6, $7, $8, $9)';

/** `Storage.settleRequest` in one round trip. */
export async function settleRequestNatively(
  ctx: QueryContext,
  input: SettleInput,
): Promise<{ balanceMicros: Micros }> {
  const { record, charge, reservationId } = input;
  checkCharge(charge);
  const recordRow = recordJson(requestRecordRow(record, ctx.dialect));
  const { rows } = await ctx.db.executeQuery<{ balance: unknown }>(
    CompiledQuery.raw(SETTLE_SQL, [
      recordRow,
      record.accountId,
      record.id,
      reservationId,
      charge?.amountMicros ?? null,
      charge ? newId('led') : null,
      charge?.description ?? null,
      charge?.keyId ?? null,
      ctx.now(),
    ]),
  );
  const row = rows[0];
  if (!row) throw new Error('tollgate_settle_request returned no row');
  return { balanceMicros: toInteger(row.balance) };
}
