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
   * What orders `ledger_entries` and `api_keys` by insertion, since rows written in the same
   * millisecond share `created_at` and ids are random. SQLite: the implicit `rowid` (neither table
   * ever loses a row, so it only grows). Postgres: `seq`, an identity column of those tables (and of
   * `byok_keys`) in its baseline; appends to one account's ledger take its row lock, so their `seq`
   * follows the order of the balance chain.
   */
  readonly insertionOrderColumn: 'rowid' | 'seq';
  /**
   * The function `f(haystack, needle)` that answers the 1-based position of `needle` in `haystack`,
   * 0 when absent: a case-sensitive substring test (`LIKE` is case-insensitive on SQLite). SQLite:
   * `instr`; Postgres: `strpos`. Written into SQL as is, so only these two names.
   */
  readonly substringPositionFunction: 'instr' | 'strpos';
  /**
   * Whether `SELECT … FOR UPDATE` exists. Postgres: yes, and a transaction that must serialise with
   * others on an account (reserve, settle) or a rate-limit window locks that row first. SQLite: no,
   * and no need: its write transaction (`BEGIN IMMEDIATE`) already holds the whole database.
   */
  readonly selectForUpdate: boolean;
  /**
   * A statement that serialises migrations across processes for the rest of the transaction, or
   * `null` when the transaction's own lock already does (SQLite's `BEGIN IMMEDIATE`).
   */
  readonly migrationLockSql: string | null;
}
