import { type EpochMs, type LedgerEntry, type Micros, type NewLedgerEntry, newId } from '@tollgate/core';
import { type Kysely, sql } from 'kysely';
import type { Database, LedgerEntriesTable } from './database.js';
import { columnsOf, type InsertRow, prepareQuery, valuesOf } from './prepared-query.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { mapLedgerEntry, toInteger } from './row-mappers.js';
import { utcMonthContaining } from './utc-month.js';

/**
 * Moves an account's cached balance by a signed amount, returning the new balance: the database does
 * the arithmetic under the row's write lock (and on Postgres the update is that lock).
 */
export const moveBalance = prepareQuery((db, p: { accountId: string; amount: Micros }) =>
  db
    .updateTable('accounts')
    .set((eb) => ({ balance_micros: eb('balance_micros', '+', p.amount).$castTo<number>() }))
    .where('id', '=', p.accountId)
    .returning('balance_micros'),
);

const LEDGER_COLUMNS = columnsOf<LedgerEntriesTable>()({
  id: true,
  account_id: true,
  amount_micros: true,
  balance_after_micros: true,
  kind: true,
  description: true,
  request_id: true,
  key_id: true,
  created_at: true,
});

/** Appends one ledger row (every column given), returning it. */
export const insertLedgerEntry = prepareQuery((db, row: InsertRow<LedgerEntriesTable>) =>
  db.insertInto('ledger_entries').values(valuesOf(row, LEDGER_COLUMNS)).returningAll(),
);

/**
 * `Storage.appendLedgerEntries`. Per entry, in one transaction: move the balance with
 * `UPDATE … SET balance_micros = balance_micros + ? RETURNING balance_micros`, then insert the entry
 * with the balance it returned. The database does the arithmetic under the row's write lock (a row
 * lock on Postgres, the database lock on SQLite), so concurrent appends from any number of
 * connections or processes queue up instead of overwriting each other: there is no
 * read-modify-write in JS.
 */
export async function appendLedgerEntries(
  ctx: QueryContext,
  accountId: string,
  entries: NewLedgerEntry[],
): Promise<{ entries: LedgerEntry[]; balanceMicros: Micros }> {
  if (entries.length === 0) throw new RangeError('appendLedgerEntries needs at least one entry');
  for (const entry of entries) {
    assertInteger('amountMicros', entry.amountMicros);
    if (entry.amountMicros === 0) throw new RangeError('a ledger entry amount cannot be zero');
  }
  return write(ctx, async (trx) => {
    const createdAt = ctx.now();
    const appended: LedgerEntry[] = [];
    let balanceMicros = 0;
    for (const entry of entries) {
      const account = await moveBalance.first(ctx, { accountId, amount: entry.amountMicros }, trx);
      if (!account) throw new Error(`account ${accountId} does not exist`);
      // Throws (and so rolls back) should a balance ever leave the safe-integer range.
      balanceMicros = toInteger(account.balance_micros);
      const row = await insertLedgerEntry.first(
        ctx,
        {
          id: newId('led'),
          account_id: accountId,
          amount_micros: entry.amountMicros,
          balance_after_micros: balanceMicros,
          kind: entry.kind,
          description: entry.description,
          request_id: entry.requestId ?? null,
          key_id: entry.keyId ?? null,
          created_at: createdAt,
        },
        trx,
      );
      if (!row) throw new Error('the ledger insert returned no row');
      appended.push(mapLedgerEntry(row));
    }
    return { entries: appended, balanceMicros };
  });
}

/** `Storage.listLedgerEntries`: in the order they were appended, which is the balance chain's order. */
export async function listLedgerEntries(ctx: QueryContext, accountId: string): Promise<LedgerEntry[]> {
  const rows = await ctx.db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy(sql.ref(ctx.dialect.insertionOrderColumn))
    .execute();
  return rows.map(mapLedgerEntry);
}

/** `Storage.getMonthToDateSpend`. */
export function getMonthToDateSpend(ctx: QueryContext, accountId: string, at: EpochMs): Promise<Micros> {
  return monthToDateCharges(ctx.db, accountId, at);
}

/** Minus the sum of the `charge` entries of the UTC month containing `at` (charges are negative). */
export async function monthToDateCharges(
  db: Kysely<Database>,
  accountId: string,
  at: EpochMs,
): Promise<Micros> {
  const row = await monthChargesQuery(db, accountId, utcMonthContaining(at)).executeTakeFirstOrThrow();
  return chargesFromSum(toInteger(row.total));
}

/**
 * The sum (negative) of the `charge` entries of a UTC month (`utcMonthContaining`), as a one-column
 * query (`total`): run on its own, or as a subquery of a larger read (reserving credit). One row of
 * the running totals `account_month_charges` keeps, instead of a sum over the month's entries.
 */
export function monthChargesQuery(db: Kysely<Database>, accountId: string, { start }: { start: EpochMs }) {
  return db.selectNoFrom((eb) =>
    eb.fn
      .coalesce(
        eb
          .selectFrom('account_month_charges')
          .select('charge_total_micros')
          .where('account_id', '=', accountId)
          .where('month_start', '=', start),
        sql.lit(0),
      )
      .as('total'),
  );
}

/** The month's charges as a positive amount, from the sum of their (negative) entries. */
export function chargesFromSum(total: Micros): Micros {
  // `-0` is not `0` to Object.is (and so to test matchers): an empty month is a plain 0.
  return total === 0 ? 0 : -total;
}
