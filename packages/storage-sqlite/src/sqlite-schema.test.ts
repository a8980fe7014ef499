import { tollgateMigrations } from '@tollgate/storage-kysely';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage, sqliteCapabilities } from './index.js';
import { sqliteBaseline } from './sqlite-baseline.js';
import { createSqliteStorageOn } from './sqlite-storage.js';
import { rawConnection, runRaw, tempDatabasePath } from './test-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function freshPath(): string {
  const file = tempDatabasePath();
  cleanups.push(file.remove);
  return file.path;
}

/** Every migration's name, in order: what a database brought up to date records. */
const ALL_MIGRATIONS = tollgateMigrations(sqliteCapabilities, sqliteBaseline).map(
  (migration) => migration.name,
);

/** A new database file whose `tollgate_migrations` records `names`, as another version left it. */
function fileRecording(names: string[]): string {
  const path = freshPath();
  const raw = rawConnection(path);
  try {
    runRaw(
      raw,
      'CREATE TABLE tollgate_migrations (name text NOT NULL PRIMARY KEY, applied_at integer NOT NULL)',
    );
    for (const name of names) raw.prepare('INSERT INTO tollgate_migrations VALUES (?, 0)').run(name);
  } finally {
    raw.close();
  }
  return path;
}

/** The tables of the file at `path`, sorted. */
function tablesOf(path: string): unknown[] {
  const raw = rawConnection(path);
  try {
    return runRaw(raw, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").map(
      (row) => row.name,
    );
  } finally {
    raw.close();
  }
}

/** The names of a table's indexes, sorted. */
function indexesOf(raw: Parameters<typeof runRaw>[0], table: string): unknown[] {
  return runRaw(
    raw,
    `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '${table}' ORDER BY name`,
  ).map((row) => row.name);
}

function migrationNames(path: string): unknown[] {
  const raw = rawConnection(path);
  try {
    return runRaw(raw, 'SELECT name FROM tollgate_migrations ORDER BY name').map((row) => row.name);
  } finally {
    raw.close();
  }
}

describe('sqlite set-up', () => {
  it('createSqliteStorage - sets WAL, busy_timeout = 0, foreign_keys, synchronous = NORMAL and temp_store = MEMORY on a file', async () => {
    const database = new BetterSqlite3(freshPath());
    const storage = await createSqliteStorageOn(database, 1234);
    cleanups.push(() => storage.close());
    await storage.createAccount({ name: 'a' });

    expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
    // SQLite never waits itself (that would block the event loop): the driver waits for up to
    // busyTimeoutMs in JS, which sqlite-locking.test.ts checks.
    expect(database.pragma('busy_timeout', { simple: true })).toBe(0);
    expect(database.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(database.pragma('synchronous', { simple: true })).toBe(1);
    // The savepoints' statement journals stay in memory, not in a temp file per commit group.
    expect(database.pragma('temp_store', { simple: true })).toBe(2);
  });

  it('createSqliteStorage - opens :memory: without WAL', async () => {
    const database = new BetterSqlite3(':memory:');
    const storage = await createSqliteStorageOn(database);
    cleanups.push(() => storage.close());
    expect(database.pragma('journal_mode', { simple: true })).toBe('memory');
    expect(await storage.countAccounts()).toBe(0);
  });

  it('migrations - run once: reopening a file keeps its data and records each migration once', async () => {
    const path = freshPath();
    const first = await createSqliteStorage({ path });
    const account = await first.createAccount({ name: 'kept' });
    await first.close();

    const again = await createSqliteStorage({ path });
    cleanups.push(() => again.close());
    expect(await again.getAccount(account.id)).toEqual(account);
    expect(migrationNames(path)).toEqual(ALL_MIGRATIONS);
  });

  it('migrations - several storages opening a fresh file at once all start, and migrate it once', async () => {
    const path = freshPath();
    const storages = await Promise.all([1, 2, 3].map(() => createSqliteStorage({ path })));
    cleanups.push(() => Promise.all(storages.map((storage) => storage.close())));

    const account = await storages[0]!.createAccount({ name: 'shared' });
    expect(await storages[2]!.getAccount(account.id)).toEqual(account);
    expect(migrationNames(path)).toEqual(ALL_MIGRATIONS);
  });

  it('stores money as INTEGER (not REAL) and flags as 0/1, and the schema refuses other flag values', async () => {
    const path = freshPath();
    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());
    const account = await storage.createAccount({ name: 'typed', monthlyLimitMicros: 5_000_000 });
    await storage.appendLedgerEntries(account.id, [
      { amountMicros: 2 ** 40, kind: 'credit', description: 'big' },
    ]);
    await storage.setAccountSuspended(account.id, true);
    const raw = rawConnection(path);
    cleanups.push(() => raw.close());

    const [row] = runRaw(
      raw,
      `SELECT typeof(a.balance_micros) AS balance, typeof(a.monthly_limit_micros) AS monthly_limit,
              typeof(a.created_at) AS created_at, a.suspended, typeof(l.amount_micros) AS amount,
              typeof(l.balance_after_micros) AS balance_after
         FROM accounts a JOIN ledger_entries l ON l.account_id = a.id`,
    );
    expect(row).toEqual({
      balance: 'integer',
      monthly_limit: 'integer',
      created_at: 'integer',
      suspended: 1,
      amount: 'integer',
      balance_after: 'integer',
    });
    expect(() => runRaw(raw, `UPDATE accounts SET suspended = 2 WHERE id = '${account.id}'`)).toThrow(
      /CHECK/,
    );
  });

  it("the schema itself refuses a key whose project is another account's", async () => {
    const path = freshPath();
    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());
    const mine = await storage.createAccount({ name: 'mine' });
    const theirs = await storage.createAccount({ name: 'theirs' });
    const project = await storage.createProject({ accountId: theirs.id, name: 'p' });
    const raw = rawConnection(path);
    cleanups.push(() => raw.close());
    raw.pragma('foreign_keys = ON');

    expect(() =>
      runRaw(
        raw,
        `INSERT INTO api_keys (id, account_id, project_id, name, scope, env, key_hash, prefix, created_at)
         VALUES ('key_x', '${mine.id}', '${project.id}', 'k', 'inference', 'live', 'h', 'gw_live_x', 0)`,
      ),
    ).toThrow(/FOREIGN KEY/);
  });

  it('the ledger keeps only the indexes its reads use; one charge per request holds', async () => {
    const path = freshPath();
    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());
    const raw = rawConnection(path);
    cleanups.push(() => raw.close());

    expect(indexesOf(raw, 'ledger_entries')).toEqual([
      'ledger_entries_account_order_idx',
      'ledger_entries_one_charge_per_request',
      'sqlite_autoindex_ledger_entries_1',
    ]);
    // The ledger's pages (newest first, by insertion order) read the account's index, not the table.
    const plan = runRaw(
      raw,
      `EXPLAIN QUERY PLAN SELECT * FROM ledger_entries WHERE account_id = 'acct_a' ORDER BY rowid DESC LIMIT 11`,
    );
    expect(plan.map((row) => row.detail).join('; ')).toMatch(/USING INDEX ledger_entries_account_order_idx/);

    const account = await storage.createAccount({ name: 'a' });
    const charge = { amountMicros: -5, kind: 'charge' as const, description: 'c', requestId: 'req_1' };
    await storage.appendLedgerEntries(account.id, [
      { amountMicros: 100, kind: 'credit', description: 'c' },
      charge,
    ]);
    await expect(storage.appendLedgerEntries(account.id, [charge])).rejects.toThrow(/UNIQUE/);
  });
  it('holds live in a WITHOUT ROWID table with one index; records have no index on their status', async () => {
    const path = freshPath();
    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());
    const raw = rawConnection(path);
    cleanups.push(() => raw.close());

    const [table] = runRaw(
      raw,
      `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'credit_reservations'`,
    );
    expect(String(table?.sql)).toMatch(/WITHOUT ROWID/);
    expect(indexesOf(raw, 'credit_reservations')).toEqual(['credit_reservations_account_expires_idx']);
    expect(indexesOf(raw, 'request_records')).toEqual([
      'request_records_account_created_id_idx',
      'sqlite_autoindex_request_records_1',
    ]);
    // The primary key still refuses a second hold of the same id.
    runRaw(raw, `INSERT INTO accounts (id, name, created_at) VALUES ('acct_a', 'a', 0)`);
    const hold = `INSERT INTO credit_reservations (id, account_id, amount_micros, created_at, expires_at)
       VALUES ('res_a', 'acct_a', 1, 1, 2)`;
    runRaw(raw, hold);
    expect(() => runRaw(raw, hold)).toThrow(/UNIQUE|PRIMARY KEY/);
  });

  it('refuses a file set up before the migrations were squashed into one baseline, and leaves it as it was', async () => {
    const path = fileRecording(['0001_initial', '0002_request_metering']);

    await expect(createSqliteStorage({ path })).rejects.toThrow(
      "sqlite: this database was set up before Tollgate's migrations were squashed into one baseline " +
        '(it records 0001_initial, 0002_request_metering), and cannot be upgraded: create a new database',
    );
    expect(tablesOf(path)).toEqual(['tollgate_migrations']);
  });

  it('refuses a file that a newer version migrated, naming the migrations it does not have', async () => {
    const path = fileRecording(['0001_baseline', '0099_later_change']);

    await expect(createSqliteStorage({ path })).rejects.toThrow(
      'sqlite: this database records migrations this version of Tollgate does not have (0099_later_change)',
    );
    expect(tablesOf(path)).toEqual(['tollgate_migrations']);
  });
});
