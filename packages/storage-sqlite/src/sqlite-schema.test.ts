import { migrateToLatest, tollgateMigrations } from '@tollgate/storage-kysely';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage, sqliteCapabilities } from './index.js';
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
const ALL_MIGRATIONS = tollgateMigrations(sqliteCapabilities).map((migration) => migration.name);

/** A new database file migrated up to `target` (an older schema to upgrade), and a raw connection to it. */
async function fileMigratedTo(target: string) {
  const path = freshPath();
  const db = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path) }) });
  await db.transaction().execute((trx) => migrateToLatest(trx, sqliteCapabilities, target));
  await db.destroy();
  const raw = rawConnection(path);
  cleanups.push(() => raw.close());
  return { path, raw };
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

  it('migration 0002 - upgrades a 0001 file: request records keep their rows, gain endpoint and stream, and waived becomes a reason', async () => {
    const { path, raw } = await fileMigratedTo('0001_initial');
    runRaw(raw, `INSERT INTO accounts (id, name, created_at) VALUES ('acct_old', 'old', 0)`);
    runRaw(
      raw,
      `INSERT INTO request_records (id, account_id, status, http_status, cost_micros, waived, byok, metadata, created_at)
       VALUES ('req_old', 'acct_old', 'success', 200, 0, 1, 1, '{"team":"a"}', 1700000000000)`,
    );

    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());

    expect(migrationNames(path)).toEqual(ALL_MIGRATIONS);
    expect(await storage.getRequestRecord('acct_old', 'req_old')).toMatchObject({
      endpoint: 'chat.completions',
      stream: false,
      waived: 'unknown',
      byok: true,
      metadata: { team: 'a' },
      createdAt: 1_700_000_000_000,
    });
    const indexes = runRaw(
      raw,
      `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'request_records'`,
    );
    expect(indexes.map((row) => row.name)).toContain('request_records_account_created_id_idx');
    expect(() => runRaw(raw, `UPDATE request_records SET status = 'odd' WHERE id = 'req_old'`)).toThrow(
      /CHECK/,
    );
  });

  it('migration 0016 - upgrades a 0015 file: live holds keep their rows in a WITHOUT ROWID table with one index', async () => {
    const { path, raw } = await fileMigratedTo('0015_byok_insertion_order');
    runRaw(raw, `INSERT INTO accounts (id, name, created_at) VALUES ('acct_old', 'old', 0)`);
    const far = Date.now() + 3_600_000;
    runRaw(
      raw,
      `INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
       VALUES ('res_b', 'acct_old', 'key_1', 'req_b', 250, 2, ${far}), ('res_a', 'acct_old', NULL, 'req_a', 100, 1, ${far})`,
    );

    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());

    expect(migrationNames(path)).toEqual(ALL_MIGRATIONS);
    expect(await storage.listReservations('acct_old', Date.now())).toEqual([
      {
        id: 'res_a',
        accountId: 'acct_old',
        keyId: null,
        requestId: 'req_a',
        amountMicros: 100,
        createdAt: 1,
        expiresAt: far,
      },
      {
        id: 'res_b',
        accountId: 'acct_old',
        keyId: 'key_1',
        requestId: 'req_b',
        amountMicros: 250,
        createdAt: 2,
        expiresAt: far,
      },
    ]);
    const [table] = runRaw(
      raw,
      `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'credit_reservations'`,
    );
    expect(String(table?.sql)).toMatch(/WITHOUT ROWID/);
    const indexes = runRaw(
      raw,
      `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'credit_reservations'`,
    );
    expect(indexes.map((row) => row.name)).toEqual(['credit_reservations_account_expires_idx']);
    // The primary key still refuses a second hold of the same id.
    expect(() =>
      runRaw(
        raw,
        `INSERT INTO credit_reservations (id, account_id, amount_micros, created_at, expires_at)
         VALUES ('res_a', 'acct_old', 1, 3, ${far})`,
      ),
    ).toThrow(/UNIQUE|PRIMARY KEY/);
  });

  it('migration 0018 - upgrades a 0017 file: the month totals start from the charges already in the ledger', async () => {
    const { path, raw } = await fileMigratedTo('0017_postgres_holds_index_scans');
    const may = Date.UTC(2030, 4, 1);
    const june = Date.UTC(2030, 5, 1);
    runRaw(raw, `INSERT INTO accounts (id, name, created_at) VALUES ('acct_a', 'a', 0), ('acct_b', 'b', 0)`);
    runRaw(
      raw,
      `INSERT INTO ledger_entries (id, account_id, amount_micros, balance_after_micros, kind, description, created_at)
       VALUES ('led_1', 'acct_a', -100, 0, 'charge', 'c', ${may}), ('led_2', 'acct_a', -20, 0, 'charge', 'c', ${june - 1}),
              ('led_3', 'acct_a', -3, 0, 'charge', 'c', ${june}), ('led_4', 'acct_a', -9000, 0, 'fee', 'f', ${may + 1}),
              ('led_5', 'acct_b', -4000, 0, 'charge', 'c', ${may + 2})`,
    );

    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());

    expect(migrationNames(path)).toEqual(ALL_MIGRATIONS);
    expect(await storage.getMonthToDateSpend('acct_a', may)).toBe(120);
    expect(await storage.getMonthToDateSpend('acct_a', june)).toBe(3);
    expect(await storage.getMonthToDateSpend('acct_b', june - 1)).toBe(4000);
    // A charge appended from now on adds to its month's total.
    const { entries } = await storage.appendLedgerEntries('acct_b', [
      { amountMicros: 100, kind: 'credit', description: 'c' },
      { amountMicros: -5, kind: 'charge', description: 'c' },
    ]);
    expect(await storage.getMonthToDateSpend('acct_b', entries[1]!.createdAt)).toBe(5);
  });

  it('migration 0020 - the ledger keeps only the indexes its reads use; one charge per request still holds', async () => {
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
  it('migration 0021 - upgrades a 0020 file: a record in progress that no hold covers is closed, one a hold covers stays, the status index goes', async () => {
    const { path, raw } = await fileMigratedTo('0020_ledger_unread_indexes');
    const far = Date.now() + 3_600_000;
    runRaw(raw, `INSERT INTO accounts (id, name, created_at) VALUES ('acct_a', 'a', 0)`);
    const record = (id: string) =>
      `INSERT INTO request_records (id, account_id, status, http_status, created_at)
       VALUES ('${id}', 'acct_a', 'in_progress', 0, 1)`;
    runRaw(raw, record('req_stranded'));
    runRaw(raw, record('req_held'));
    runRaw(
      raw,
      `INSERT INTO credit_reservations (id, account_id, amount_micros, created_at, expires_at, request_id)
       VALUES ('res_held', 'acct_a', 1, 1, ${far}, 'req_held')`,
    );

    const storage = await createSqliteStorage({ path });
    cleanups.push(() => storage.close());

    expect(migrationNames(path)).toEqual(ALL_MIGRATIONS);
    expect(await storage.getRequestRecord('acct_a', 'req_stranded')).toMatchObject({
      status: 'error',
      httpStatus: 500,
      errorCode: 'internal_error',
      costMicros: 0,
    });
    expect((await storage.getRequestRecord('acct_a', 'req_held'))?.status).toBe('in_progress');
    expect(indexesOf(raw, 'request_records')).toEqual([
      'request_records_account_created_id_idx',
      'sqlite_autoindex_request_records_1',
    ]);
  });
});
