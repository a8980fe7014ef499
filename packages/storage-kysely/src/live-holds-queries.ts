import type { EpochMs } from '@tollgate/core';
import { type AliasedExpression, type Expression, type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import { monthChargesQuery } from './ledger-queries.js';
import { prepareQuery } from './prepared-query.js';
import type { QueryContext } from './query-context.js';

type HoldsParams = { accountId: string; keyId: string; now: EpochMs };
/** `windowStart`: the start of the key's current limit window (its holds and days from there). */
type WindowParams = { windowStart: EpochMs };
type MonthParams = { start: EpochMs };

/**
 * Σ live holds (`expires_at > now`) of the account, and of one of its keys, the key's spend, plus
 * `month`: the sum (negative) of the month's charges when asked for, else 0. One read. With a limit
 * window, the key's figures are those of the window: its live holds taken since `windowStart` (a
 * hold taken before counts in the window it was taken in, where its charge goes too) and its spend
 * of the days since then (`key_day_spend`).
 */
function liveHoldsQuery(
  db: Kysely<Database>,
  p: HoldsParams & Partial<WindowParams>,
  month: AliasedExpression<unknown, 'month'>,
  windowed: boolean,
) {
  // Decided by `windowed`, never by a parameter: a prepared query's parameters are markers.
  const windowStart = windowed ? (p.windowStart as EpochMs) : undefined;
  return db
    .selectFrom('credit_reservations')
    .select((eb) => {
      const ofKey = eb('key_id', '=', p.keyId);
      const keyHold: Expression<unknown> =
        windowStart === undefined ? ofKey : eb.and([ofKey, eb('created_at', '>=', windowStart)]);
      return [
        eb.fn.coalesce(eb.fn.sum('amount_micros'), sql.lit(0)).as('account'),
        eb.fn
          .coalesce(
            eb.fn.sum(
              eb
                .case()
                .when(keyHold as never)
                .then(eb.ref('amount_micros'))
                .else(sql.lit(0))
                .end(),
            ),
            sql.lit(0),
          )
          .as('key'),
        // Read here, not with the lock: a Postgres statement that waited for a row lock re-reads the
        // locked row (the account) but not the rows it joined, so the key's spend read alongside the
        // lock could predate the settle it waited for.
        windowStart === undefined
          ? eb.selectFrom('api_keys').select('spent_micros').where('id', '=', p.keyId).as('key_spent')
          : eb
              .selectFrom('key_day_spend')
              .select((sub) => sub.fn.coalesce(sub.fn.sum('spent_micros'), sql.lit(0)).as('s'))
              .where('key_id', '=', p.keyId)
              .where('day_start', '>=', windowStart)
              .as('key_spent'),
        month,
      ];
    })
    .where('account_id', '=', p.accountId)
    .where('expires_at', '>', p.now);
}

const noMonth = sql.lit(0).as('month');
const liveHolds = prepareQuery((db, p: HoldsParams) => liveHoldsQuery(db, p, noMonth, false));
const liveHoldsAndMonth = prepareQuery((db, p: HoldsParams & MonthParams) =>
  liveHoldsQuery(db, p, monthChargesQuery(db, p.accountId, p).as('month'), false),
);
const windowHolds = prepareQuery((db, p: HoldsParams & WindowParams) => liveHoldsQuery(db, p, noMonth, true));
const windowHoldsAndMonth = prepareQuery((db, p: HoldsParams & WindowParams & MonthParams) =>
  liveHoldsQuery(db, p, monthChargesQuery(db, p.accountId, p).as('month'), true),
);

/**
 * The reserve's figures (see {@link liveHoldsQuery}): with the month's charges when `monthStart` is
 * given, with the key's window figures when `windowStart` is.
 */
export function readHolds(
  ctx: QueryContext,
  db: Kysely<Database>,
  p: HoldsParams & { monthStart: EpochMs | null; windowStart: EpochMs | null },
) {
  const { accountId, keyId, now, monthStart, windowStart } = p;
  const base = { accountId, keyId, now };
  if (windowStart === null) {
    return monthStart === null
      ? liveHolds.first(ctx, base, db)
      : liveHoldsAndMonth.first(ctx, { ...base, start: monthStart }, db);
  }
  return monthStart === null
    ? windowHolds.first(ctx, { ...base, windowStart }, db)
    : windowHoldsAndMonth.first(ctx, { ...base, windowStart, start: monthStart }, db);
}
