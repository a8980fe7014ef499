import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { RESERVE_CREDIT } from './0010-postgres-hot-path.js';
import { RESERVE_BATCH } from './0013-postgres-set-based-batches.js';
import { RESERVES_WITHOUT_BITMAP_SCANS } from './0017-postgres-holds-index-scans.js';
import { postgresOnlyMigration, sqliteOnlyMigration } from './dialect-only.js';
import { replaceInFunction } from './replace-in-function.js';

/**
 * The month's charges of an account, kept as a running total instead of summed from the ledger.
 *
 * A reserve on an account with a monthly ceiling used to sum every `charge` entry of the month.
 * That read grows with the month: on SQLite, with 10,000 charges it took 1.5 ms, with 100,000
 * 15 ms, with 1,000,000 110 ms, on the event loop, for every request. On Postgres it took 4.9 ms
 * for 10,000 charges, once per account in each reserve batch.
 *
 * `account_month_charges` holds one row per account and UTC month: the sum of that month's charge
 * entries. Like the entries, the sum is negative. A trigger on `ledger_entries` adds each charge
 * to the row of the UTC month of its `created_at`, in the transaction that inserts it. Every writer
 * of an account's ledger holds the account's lock, so the total is exact. Reserves and
 * `getMonthToDateSpend` read one row. The existing charges are summed into the table here, once.
 *
 * Postgres: one statement-level trigger per insert statement, which adds up the statement's charges
 * per account and month first (a settle batch inserts all its entries in one statement); its
 * function keeps the schema it was created in as its search_path. The two reserve functions are
 * replaced by the same functions that read the total. SQLite: a row trigger.
 */
export function monthChargeTotalsMigration(dialect: DialectCapabilities): Migration {
  return {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('account_month_charges')
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('month_start', dialect.int8Type, (col) => col.notNull())
        .addColumn('charge_total_micros', dialect.int8Type, (col) => col.notNull())
        .addPrimaryKeyConstraint('account_month_charges_pk', ['account_id', 'month_start'])
        .execute();
      await postgresOnlyMigration(dialect, POSTGRES).up(db);
      await sqliteOnlyMigration(dialect, SQLITE).up(db);
    },
  };
}

/** The epoch ms that starts the UTC month of `ms` (an epoch-ms SQL expression). */
const postgresMonthStart = (ms: string) =>
  `(extract(epoch FROM date_trunc('month', to_timestamp(${ms} / 1000) AT TIME ZONE 'UTC')) * 1000)::bigint`;
const sqliteMonthStart = (ms: string) =>
  `CAST(strftime('%s', ${ms} / 1000, 'unixepoch', 'start of month') AS INTEGER) * 1000`;

const ADD_TO_TOTAL = `ON CONFLICT (account_id, month_start) DO UPDATE
  SET charge_total_micros = account_month_charges.charge_total_micros + excluded.charge_total_micros`;

const backfill = (monthStart: (ms: string) => string) => `INSERT INTO account_month_charges
  (account_id, month_start, charge_total_micros)
  SELECT account_id, ${monthStart('created_at')}, sum(amount_micros) FROM ledger_entries
    WHERE kind = 'charge' GROUP BY account_id, ${monthStart('created_at')}`;

/** 0010's single-call reserve, reading the month's total. */
const RESERVE_CREDIT_READING_TOTALS = replaceInFunction('0018', RESERVE_CREDIT, [
  [
    `(
           SELECT coalesce(sum(amount_micros), 0) FROM ledger_entries
           WHERE account_id = p_account_id AND kind = 'charge'
             AND created_at >= p_month_start AND created_at < p_month_end) END`,
    `coalesce((
           SELECT m.charge_total_micros FROM account_month_charges m
           WHERE m.account_id = p_account_id AND m.month_start = p_month_start), 0) END`,
  ],
]);

/** 0013's reserve batch, reading the month's total (0019 changes it again). */
export const RESERVE_BATCH_READING_TOTALS = replaceInFunction('0018', RESERVE_BATCH, [
  [
    `SELECT tollgate_safe_integer(coalesce(sum(l.amount_micros), 0)) INTO v_month FROM ledger_entries l
        WHERE l.account_id = v_account AND l.kind = 'charge'
          AND l.created_at >= v_month_start AND l.created_at < (c.v->>'month_end')::bigint;`,
    `SELECT tollgate_safe_integer(coalesce((SELECT m.charge_total_micros FROM account_month_charges m
          WHERE m.account_id = v_account AND m.month_start = v_month_start), 0)) INTO v_month;`,
  ],
]);

const POSTGRES = [
  // The schema it is created in, whatever the search_path of the session that inserts the entry:
  // an insert into one tenant's ledger must never add to another schema's totals.
  `CREATE FUNCTION tollgate_add_month_charges() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $$
BEGIN
  INSERT INTO account_month_charges (account_id, month_start, charge_total_micros)
    SELECT n.account_id, ${postgresMonthStart('n.created_at')}, sum(n.amount_micros) FROM new_entries n
      WHERE n.kind = 'charge' GROUP BY 1, 2
  ${ADD_TO_TOTAL};
  RETURN NULL;
END
$$`,
  `CREATE TRIGGER ledger_entries_month_charges AFTER INSERT ON ledger_entries
    REFERENCING NEW TABLE AS new_entries FOR EACH STATEMENT EXECUTE FUNCTION tollgate_add_month_charges()`,
  backfill(postgresMonthStart),
  RESERVE_CREDIT_READING_TOTALS,
  RESERVE_BATCH_READING_TOTALS,
  // Replacing a function resets its settings.
  ...RESERVES_WITHOUT_BITMAP_SCANS,
];

const SQLITE = [
  `CREATE TRIGGER ledger_entries_month_charges AFTER INSERT ON ledger_entries WHEN NEW.kind = 'charge'
BEGIN
  INSERT INTO account_month_charges (account_id, month_start, charge_total_micros)
    VALUES (NEW.account_id, ${sqliteMonthStart('NEW.created_at')}, NEW.amount_micros)
  ${ADD_TO_TOTAL};
END`,
  backfill(sqliteMonthStart),
];
