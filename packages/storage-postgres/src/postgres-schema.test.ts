import { PGlite } from '@electric-sql/pglite';
import { migrateToLatest, tollgateMigrations } from '@tollgate/storage-kysely';
import { Kysely, PGliteDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { postgresTestBed } from './harness-variants.test-support.js';
import { createPgliteStorage, createPostgresStorage } from './index.js';
import { quoteIdentifier, useSchema } from './migrate-postgres.js';
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

    it('migration 0017 - the reserve functions read holds without bitmap scans: by the covering index, even with deleted holds about', async () => {
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

      // Under that setting, an account's live holds are summed from 0013's covering index alone,
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

    it('migration 0023 - the settle batch deletes its holds by their key, not by a scan of a table full of deleted holds', async () => {
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
      const remove = /DELETE FROM credit_reservations[^;]*/.exec(String(settle?.prosrc))?.[0];
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

    it("migration 0018 - a charge inserted by a session whose search_path is elsewhere adds to its own schema's month total", async () => {
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

    it('migration 0020 - the ledger keeps only the indexes its reads use', async () => {
      const { raw } = await open();
      expect(await indexesOf(raw, 'ledger_entries')).toEqual([
        'ledger_entries_account_order_idx',
        'ledger_entries_one_charge_per_request',
        'ledger_entries_pkey',
      ]);
    });

    it("migration 0021 - the records keep no index on their status, and leave room on each page for the settle's update", async () => {
      const { raw } = await open();
      expect(await indexesOf(raw, 'request_records')).toEqual([
        'request_records_account_created_id_idx',
        'request_records_pk_v3',
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

/** A new schema on the shared PGlite, migrated up to `target` (an older schema to upgrade). */
async function sharedSchemaMigratedTo(target: string) {
  const pglite = await sharedPglite();
  const schema = randomSchema();
  await pglite.exec(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  cleanups.push(() => pglite.exec(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE; RESET search_path`));
  // Not destroyed: kysely would close the shared instance.
  const db = new Kysely<unknown>({
    dialect: new PGliteDialect({ pglite, onCreateConnection: useSchema(schema) }),
  });
  await db.transaction().execute((trx) => migrateToLatest(trx, postgresCapabilities, target));
  return { pglite, schema };
}

describe('createPgliteStorage', () => {
  it('migration 0002 - upgrades a 0001 schema: request records keep their rows, gain endpoint and stream, and waived becomes a reason', async () => {
    const { pglite, schema } = await sharedSchemaMigratedTo('0001_initial');
    await pglite.exec(
      `INSERT INTO accounts (id, name, created_at) VALUES ('acct_old', 'old', 0);
       INSERT INTO request_records (id, account_id, status, http_status, cost_micros, waived, byok, metadata, created_at)
       VALUES ('req_old', 'acct_old', 'success', 200, 0, true, true, '{"team":"a"}', 1700000000000)`,
    );

    const storage = await createPgliteStorage({ pglite, schema });

    expect(await storage.getRequestRecord('acct_old', 'req_old')).toMatchObject({
      endpoint: 'chat.completions',
      stream: false,
      waived: 'unknown',
      byok: true,
      metadata: { team: 'a' },
      createdAt: 1_700_000_000_000,
    });
    const { rows } = await pglite.query<{ name: string }>(
      `SELECT conname AS name FROM pg_constraint WHERE conrelid = 'request_records'::regclass ORDER BY conname`,
    );
    // 0003 rebuilt the table once more (widening the status check): its constraints carry `_v3`.
    expect(rows.map((row) => row.name)).toEqual([
      'request_records_byok_flag_v3',
      'request_records_cache_hit_flag_v3',
      'request_records_pk_v3',
      'request_records_status_v3',
      'request_records_stream_flag_v3',
    ]);
  });

  it('migration 0018 - upgrades a 0017 schema: the month totals start from the charges already in the ledger', async () => {
    const { pglite, schema } = await sharedSchemaMigratedTo('0017_postgres_holds_index_scans');
    const may = Date.UTC(2030, 4, 1);
    const june = Date.UTC(2030, 5, 1);
    await pglite.exec(
      `INSERT INTO accounts (id, name, created_at) VALUES ('acct_a', 'a', 0), ('acct_b', 'b', 0);
       INSERT INTO ledger_entries (id, account_id, amount_micros, balance_after_micros, kind, description, created_at)
       VALUES ('led_1', 'acct_a', -100, 0, 'charge', 'c', ${may}), ('led_2', 'acct_a', -20, 0, 'charge', 'c', ${june - 1}),
              ('led_3', 'acct_a', -3, 0, 'charge', 'c', ${june}), ('led_4', 'acct_a', -9000, 0, 'fee', 'f', ${may + 1}),
              ('led_5', 'acct_b', -4000, 0, 'charge', 'c', ${may + 2})`,
    );

    const storage = await createPgliteStorage({ pglite, schema });

    expect(await storage.getMonthToDateSpend('acct_a', may)).toBe(120);
    expect(await storage.getMonthToDateSpend('acct_a', june)).toBe(3);
    expect(await storage.getMonthToDateSpend('acct_b', june - 1)).toBe(4000);
    // The reserve functions read the totals too: 10,000 a month leaves 6,000 to acct_b in May.
    await pglite.exec(
      `UPDATE accounts SET balance_micros = 1000000, monthly_limit_micros = 10000 WHERE id = 'acct_b'`,
    );
    const key = await storage.createApiKey({
      accountId: 'acct_b',
      name: 'k',
      scope: 'inference',
      env: 'live',
      hash: 'a'.repeat(64),
      prefix: 'gw_live_a',
    });
    const reserve = (amountMicros: number) =>
      storage.reserveCredit({
        accountId: 'acct_b',
        keyId: key.id,
        amountMicros,
        now: may + 10,
        ttlMs: 60_000,
        requestId: `req_${amountMicros}`,
      });
    expect(await reserve(6_001)).toMatchObject({
      ok: false,
      reason: 'monthly_limit_exceeded',
      availableMicros: 6_000,
    });
    expect(await reserve(6_000)).toMatchObject({ ok: true });
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
    expect(rows).toEqual(tollgateMigrations(postgresCapabilities).map(({ name }) => ({ name })));
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
