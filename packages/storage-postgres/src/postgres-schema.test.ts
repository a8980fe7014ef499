import { PGlite } from '@electric-sql/pglite';
import type { StorageHarness } from '@tollgate/core/testing';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPgliteStorage, createPostgresStorage } from './index.js';
import { quoteIdentifier } from './migrate-postgres.js';
import { pgliteHarness, postgresHarness, randomSchema } from './test-harness.js';

let shared: PGlite | undefined;
afterAll(() => shared?.close());
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const databaseUrl = process.env.TEST_DATABASE_URL;
const variants: { name: string; skip?: string; open: () => Promise<StorageHarness> }[] = [
  {
    name: 'PGlite',
    open: async () => {
      shared ??= await PGlite.create();
      return pgliteHarness(shared);
    },
  },
  {
    name: 'server',
    ...(databaseUrl ? {} : { skip: 'TEST_DATABASE_URL is not set' }),
    open: () => postgresHarness(databaseUrl!),
  },
];

for (const variant of variants) {
  describe.skipIf(variant.skip !== undefined)(`postgres schema (${variant.name})`, () => {
    async function open() {
      const harness = await variant.open();
      cleanups.push(() => harness.close());
      return harness;
    }

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

describe('createPgliteStorage', () => {
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
      `SELECT name FROM ${quoteIdentifier(schema)}.kysely_migration ORDER BY name`,
    );
    expect(rows).toEqual([{ name: '0001_initial' }, { name: '0002_request_metering' }]);
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
