import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** Runs one raw statement on a better-sqlite3 connection: rows for a query, `[]` otherwise. */
export function runRaw(database: BetterSqlite3.Database, sql: string): Record<string, unknown>[] {
  const statement = database.prepare(sql);
  if (statement.reader) return statement.all() as Record<string, unknown>[];
  statement.run();
  return [];
}

/** A fresh temp dir holding the path of a database file not created yet; `remove()` deletes it all. */
export function tempDatabasePath(): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-'));
  return { path: join(dir, 'tollgate.db'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A second, plain connection to a file, as another process would open it. */
export function rawConnection(path: string): BetterSqlite3.Database {
  const database = new BetterSqlite3(path);
  database.pragma('busy_timeout = 5000');
  return database;
}

/**
 * An account as another process sees the file right now, over a connection of its own: the cached
 * balance, the sum of its ledger and how many entries it has.
 */
export function accountFromOutside(
  path: string,
  accountId: string,
): { balance: number | null; total: number | null; entries: number } {
  const raw = rawConnection(path);
  try {
    const [row] = runRaw(
      raw,
      `SELECT (SELECT balance_micros FROM accounts WHERE id = '${accountId}') AS balance,
              (SELECT SUM(amount_micros) FROM ledger_entries WHERE account_id = '${accountId}') AS total,
              (SELECT COUNT(*) FROM ledger_entries WHERE account_id = '${accountId}') AS entries`,
    );
    return row as { balance: number | null; total: number | null; entries: number };
  } finally {
    raw.close();
  }
}
