import type { DbBoolean } from './database.js';

/**
 * Everything the shared queries and migrations need to know about the database underneath, as
 * values and small functions rather than `instanceof` checks. An adapter builds one and passes it
 * to `createKyselyStorage` together with its `Kysely` instance.
 *
 * One thing is not here because kysely already has a seam for it: how a transaction begins. Every
 * write goes through `db.transaction()`, so the adapter's driver must begin a transaction that is
 * safe against other processes (SQLite: `BEGIN IMMEDIATE`, taking the write lock up front so two
 * writers never deadlock on a lock upgrade; Postgres: a plain `BEGIN`, row locks do the rest).
 */
export interface DialectCapabilities {
  /** For error messages. */
  readonly name: string;
  /** The column type of money and epoch-millisecond columns. */
  readonly int8Type: 'bigint' | 'integer';
  /** The column type of flags (SQLite has no BOOLEAN: 0/1 in an INTEGER). */
  readonly booleanType: 'boolean' | 'integer';
  /** How a boolean is bound as a parameter (better-sqlite3 rejects JS booleans). */
  bool(value: boolean): DbBoolean;
  /**
   * Statements, run in order by the initial migration once the tables exist, that make
   * `ledger_entries` append-only in the database itself: UPDATE and DELETE (and TRUNCATE where
   * there is one) must fail with a message containing `ledger_entries is append-only`.
   */
  readonly appendOnlyLedgerSql: readonly string[];
}
