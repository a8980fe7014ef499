import { PGlite } from '@electric-sql/pglite';
import { tollgateMigrations } from '@tollgate/storage-kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { readFunctionFiles } from './function-files.js';
import { postgresTestBed } from './harness-variants.test-support.js';
import { createPgliteStorage, createPostgresStorage } from './index.js';
import { quoteIdentifier } from './migrate-postgres.js';
import { postgresBaseline } from './postgres-baseline.js';
import { postgresCapabilities } from './postgres-capabilities.js';
import { postgresHarness, randomSchema } from './test-harness.js';

const { variants, cleanups, sharedPglite, databaseUrl } = postgresTestBed();

/** The names of a table's indexes in the current schema, sorted. */
async function indexesOf(raw: (sql: string) => Promise<Record<string, unknown>[]>, table: string) {
  const rows = await raw(
    `SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = '${table}'
       ORDER BY indexname`,
  );
  return rows.map((row) => row.indexname);
}

for (const variant of variants) {
  describe.skipIf(variant.skip !== undefined)(`postgres schema (${variant.name})`, () => {
    const open = () => variant.open();

    it('a TRUNCATE of the ledger is rejected by the database and the rows remain', async () => {
      const { storage, raw } = await open();
      const account = await storage.createAccount({ name: 'a' });
      await storage.appendLedgerEntries(account.id, [{ amountMicros: 5, kind: 'credit', description: 'c' }]);

      await expect(raw('TRUNCATE ledger_entries')).rejects.toThrow(/ledger_entries is append-only/);
      expect(await storage.listLedgerEntries(account.id)).toHaveLength(1);
    });

    it('money and time columns are BIGINT and flags BOOLEAN', async () => {
      const { raw } = await open();
      const rows = await raw(
        `SELECT table_name, column_name, data_type FROM information_schema.columns
          WHERE table_schema = current_schema()
            AND column_name IN ('balance_micros', 'amount_micros', 'created_at', 'suspended', 'disabled', 'stream', 'byok')`,
      );
      for (const row of rows) {
        const expected = ['suspended', 'disabled', 'stream', 'byok'].includes(String(row.column_name))
          ? 'boolean'
          : 'bigint';
        expect(row.data_type, `${row.table_name}.${row.column_name}`).toBe(expected);
      }
      expect(rows.length).toBeGreaterThan(8);
    });

    it('the reserve functions read holds without bitmap scans: by the covering index, even with deleted holds about', async () => {
      const { storage, raw } = await open();
      const config = await raw(
        `SELECT proname, proconfig FROM pg_proc
          WHERE pronamespace = current_schema()::regnamespace
            AND proname IN ('tollgate_reserve_batch', 'tollgate_reserve_credit') ORDER BY proname`,
      );
      expect(config).toEqual([
        { proname: 'tollgate_reserve_batch', proconfig: ['enable_bitmapscan=off'] },
        { proname: 'tollgate_reserve_credit', proconfig: ['enable_bitmapscan=off'] },
      ]);

      // Under that setting, an account's live holds are summed from the covering index alone,
      // after a crowd of holds was inserted and deleted (each settle leaves one until a vacuum).
      const account = await storage.createAccount({ name: 'a' });
      await raw(
        `INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
           SELECT 'res_' || g, '${account.id}', NULL, NULL, 10, 0, 900000 FROM generate_series(1, 2000) g`,
      );
      await raw(`DELETE FROM credit_reservations WHERE account_id = '${account.id}'`);
      await raw('ANALYZE credit_reservations');
      await raw('SET enable_bitmapscan = off');
      try {
        const plan = await raw(
          `EXPLAIN SELECT coalesce(sum(amount_micros), 0) FROM credit_reservations
             WHERE account_id = '${account.id}' AND key_id = 'key_x' AND expires_at > 1000`,
        );
        const text = plan.map((row) => String(row['QUERY PLAN'])).join('\n');
        expect(text).toMatch(/Index Only Scan using credit_reservations_account_expires_idx/);
      } finally {
        await raw('RESET enable_bitmapscan');
      }
    });

    it('the settle batch deletes its holds by their key, not by a scan of a table full of deleted holds', async () => {
      const { storage, raw } = await open();
      const [settle] = await raw(
        `SELECT proconfig, prosrc FROM pg_proc
          WHERE pronamespace = current_schema()::regnamespace AND proname = 'tollgate_settle_batch'`,
      );
      expect(settle?.proconfig).toEqual(['enable_seqscan=off']);

      // The function's own DELETE of its holds, on a young table (never analyzed) that a crowd of
      // settles has left full of deleted holds, planned under the function's setting.
      const account = await storage.createAccount({ name: 'a' });
      await raw(
        `INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
           SELECT 'res_' || g, '${account.id}', NULL, NULL, 10, 0, 900000 FROM generate_series(1, 2000) g`,
      );
      await raw(`DELETE FROM credit_reservations WHERE account_id = '${account.id}'`);
      // The DELETE with its RETURNING (the holds' days), without the CTE around it.
      const remove = /DELETE FROM credit_reservations[\s\S]*?RETURNING[^\n]*/.exec(
        String(settle?.prosrc),
      )?.[0];
      expect(remove).toBeDefined();
      // As plpgsql runs it: a prepared statement whose parameters are the calls and their positions,
      // on the generic plan a session keeps.
      const statement = remove!.replaceAll('p_calls', '$1').replaceAll('v_written', '$2');
      const calls = JSON.stringify([{ reservation_id: 'res_1', account_id: account.id }]);
      await raw(`PREPARE settle_holds(jsonb, integer[]) AS ${statement}`);
      await raw('SET plan_cache_mode = force_generic_plan');
      await raw('SET enable_seqscan = off');
      try {
        const plan = (await raw(`EXPLAIN EXECUTE settle_holds('${calls}', '{0}')`))
          .map((row) => String(row['QUERY PLAN']))
          .join('\n');
        expect(plan).toMatch(/Index Scan using credit_reservations_pkey/);
        expect(plan).not.toMatch(/Seq Scan on credit_reservations/);
      } finally {
        await raw('RESET enable_seqscan');
        await raw('RESET plan_cache_mode');
        await raw('DEALLOCATE settle_holds');
      }
    });

    it("a charge inserted by a session whose search_path is elsewhere adds to its own schema's month total", async () => {
      const { storage, raw } = await open();
      const account = await storage.createAccount({ name: 'a' });
      const [{ schema } = {}] = await raw('SELECT current_schema() AS schema');
      const at = Date.UTC(2031, 6, 15);
      await raw('SET search_path TO pg_catalog');
      try {
        await raw(
          `INSERT INTO ${quoteIdentifier(String(schema))}.ledger_entries
             (id, account_id, amount_micros, balance_after_micros, kind, description, created_at)
           VALUES ('led_elsewhere', '${account.id}', -70, 0, 'charge', 'c', ${at})`,
        );
      } finally {
        await raw(`SET search_path TO ${quoteIdentifier(String(schema))}`);
      }
      expect(await storage.getMonthToDateSpend(account.id, at)).toBe(70);
    });

    it('the ledger and the holds have only the indexes their reads use', async () => {
      const { raw } = await open();
      expect(await indexesOf(raw, 'ledger_entries')).toEqual([
        'ledger_entries_account_order_idx',
        'ledger_entries_one_charge_per_request',
        'ledger_entries_pkey',
      ]);
      expect(await indexesOf(raw, 'credit_reservations')).toEqual([
        'credit_reservations_account_expires_idx',
        'credit_reservations_expires_at_idx',
        'credit_reservations_pkey',
      ]);
    });

    it("the records keep no index on their status, and leave room on each page for the settle's update", async () => {
      const { raw } = await open();
      expect(await indexesOf(raw, 'request_records')).toEqual([
        'request_records_account_created_id_idx',
        'request_records_pkey',
      ]);
      const [table] = await raw(
        `SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = current_schema() AND c.relname = 'request_records'`,
      );
      expect(table?.reloptions).toEqual(['fillfactor=70']);
    });

    it("the schema itself refuses a key whose project is another account's", async () => {
      const { storage, raw } = await open();
      const mine = await storage.createAccount({ name: 'mine' });
      const theirs = await storage.createAccount({ name: 'theirs' });
      const project = await storage.createProject({ accountId: theirs.id, name: 'p' });

      await expect(
        raw(`INSERT INTO api_keys (id, account_id, project_id, name, scope, env, key_hash, prefix, created_at)
             VALUES ('key_x', '${mine.id}', '${project.id}', 'k', 'inference', 'live', 'h', 'gw_live_x', 0)`),
      ).rejects.toThrow(/api_keys_project_of_account/);
    });
  });
}

/** A new schema on the shared PGlite whose `tollgate_migrations` records `names`, as another version left it. */
async function sharedSchemaRecording(names: string[]) {
  const pglite = await sharedPglite();
  const schema = randomSchema();
  await pglite.exec(`CREATE SCHEMA ${quoteIdentifier(schema)};
    CREATE TABLE ${quoteIdentifier(schema)}.tollgate_migrations (name text PRIMARY KEY, applied_at bigint NOT NULL)`);
  for (const name of names) {
    await pglite.query(`INSERT INTO ${quoteIdentifier(schema)}.tollgate_migrations VALUES ($1, 0)`, [name]);
  }
  cleanups.push(() => pglite.exec(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE; RESET search_path`));
  return { pglite, schema };
}

/** The tables of `schema`, sorted. */
async function tablesOf(pglite: PGlite, schema: string) {
  const { rows } = await pglite.query<{ name: string }>(
    'SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 ORDER BY tablename',
    [schema],
  );
  return rows.map((row) => row.name);
}

describe('createPgliteStorage', () => {
  it('refuses a schema set up before the migrations were squashed into one baseline, and leaves it as it was', async () => {
    const { pglite, schema } = await sharedSchemaRecording(['0001_initial', '0002_request_metering']);

    await expect(createPgliteStorage({ pglite, schema })).rejects.toThrow(
      "postgres: this database was set up before Tollgate's migrations were squashed into one baseline " +
        '(it records 0001_initial, 0002_request_metering), and cannot be upgraded: create a new database',
    );
    expect(await tablesOf(pglite, schema)).toEqual(['tollgate_migrations']);
  });

  it('refuses a schema that a newer version migrated, naming the migrations it does not have', async () => {
    const { pglite, schema } = await sharedSchemaRecording(['0001_baseline', '0099_later_change']);

    await expect(createPgliteStorage({ pglite, schema })).rejects.toThrow(
      'postgres: this database records migrations this version of Tollgate does not have (0099_later_change)',
    );
    expect(await tablesOf(pglite, schema)).toEqual(['tollgate_migrations']);
  });

  it('starts its own in-memory instance when given none, and closes it on close()', async () => {
    const storage = await createPgliteStorage();
    const account = await storage.createAccount({ name: 'solo' });
    expect(await storage.getAccount(account.id)).toEqual(account);
    await storage.close();
    await expect(storage.ping()).rejects.toThrow();
  });

  it("leaves a caller's instance open on close()", async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const storage = await createPgliteStorage({ pglite });
    await storage.close();
    expect(pglite.closed).toBe(false);
    expect((await pglite.query('SELECT count(*)::int AS n FROM accounts')).rows).toEqual([{ n: 0 }]);
  });
});

describe.skipIf(!databaseUrl)('createPostgresStorage (server at TEST_DATABASE_URL)', () => {
  it('several processes starting on a fresh schema at once all start, and migrate it once', async () => {
    const schema = randomSchema();
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
      await admin.end();
    });

    const storages = await Promise.all(
      [1, 2, 3, 4].map(() => createPostgresStorage({ connectionString: databaseUrl!, schema, poolSize: 2 })),
    );
    cleanups.push(() => Promise.all(storages.map((storage) => storage.close())));

    const account = await storages[0]!.createAccount({ name: 'shared' });
    expect(await storages[3]!.getAccount(account.id)).toEqual(account);
    const { rows } = await admin.query(
      `SELECT name FROM ${quoteIdentifier(schema)}.tollgate_migrations ORDER BY name`,
    );
    expect(rows).toEqual(
      tollgateMigrations(postgresCapabilities, postgresBaseline).map(({ name }) => ({ name })),
    );
    const functions = await admin.query(
      `SELECT file FROM ${quoteIdentifier(schema)}.tollgate_functions ORDER BY file`,
    );
    expect(functions.rows).toEqual(readFunctionFiles().map(({ file }) => ({ file })));
  });

  it('keeps each schema to itself: a second schema on the same database starts empty', async () => {
    const first = await postgresHarness(databaseUrl!);
    cleanups.push(() => first.close());
    await first.storage.createAccount({ name: 'elsewhere' });
    const second = await postgresHarness(databaseUrl!);
    cleanups.push(() => second.close());

    expect(await second.storage.countAccounts()).toBe(0);
    expect(await first.storage.countAccounts()).toBe(1);
  });
});
