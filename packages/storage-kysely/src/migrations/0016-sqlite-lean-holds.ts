import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { sqliteOnlyMigration } from './dialect-only.js';

/**
 * SQLite's holds table costs fewer pages per metered request. Every request inserts a hold in its
 * reserve's commit group and deletes it in its settle's, and every b-tree a row lives in is a page
 * the WAL takes again at each commit. With 0001's five (the table, its primary key and three
 * indexes), holds were 10 of the ~28 WAL frames a request wrote at c=1. Now there are two:
 * - the table is `WITHOUT ROWID`, so the primary key is the table;
 * - one index, `(account_id, expires_at)`, with the key and the amount in it, answers the reserve's
 *   sum of an account's live holds without reading the table.
 * The indexes on `key_id` and `expires_at` go. No query looks holds up by key alone. The expiry
 * sweep reads the whole table, and that is cheap: it only holds the requests in flight and the
 * expired holds the last sweep left. Postgres keeps its own design (0013).
 * The rows are copied over in the migrating transaction.
 */
export function sqliteLeanHoldsMigration(dialect: DialectCapabilities): Migration {
  return sqliteOnlyMigration(dialect, [
    `CREATE TABLE credit_reservations_next (
      id text NOT NULL PRIMARY KEY,
      account_id text NOT NULL,
      key_id text,
      request_id text,
      amount_micros integer NOT NULL,
      created_at integer NOT NULL,
      expires_at integer NOT NULL
    ) WITHOUT ROWID`,
    `INSERT INTO credit_reservations_next (${COLUMNS}) SELECT ${COLUMNS} FROM credit_reservations`,
    'DROP TABLE credit_reservations',
    'ALTER TABLE credit_reservations_next RENAME TO credit_reservations',
    `CREATE INDEX credit_reservations_account_expires_idx
      ON credit_reservations (account_id, expires_at, key_id, amount_micros)`,
  ]);
}

const COLUMNS = 'id, account_id, key_id, request_id, amount_micros, created_at, expires_at';
