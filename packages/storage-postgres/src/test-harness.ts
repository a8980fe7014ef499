import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import type { StorageHarness } from '@tollgate/core/testing';
import pg from 'pg';
import { createPgliteStorage, createPostgresStorage } from './index.js';
import { quoteIdentifier } from './migrate-postgres.js';

/** A schema name no other test uses. */
export function randomSchema(): string {
  return `tollgate_test_${randomBytes(6).toString('hex')}`;
}

/**
 * A fresh schema on a shared PGlite instance: starting PGlite takes over a second, a schema a few
 * milliseconds. Tests of one file run one at a time, so the instance's one session can follow
 * whichever schema the current test uses.
 */
export async function pgliteHarness(pglite: PGlite): Promise<StorageHarness> {
  const schema = randomSchema();
  const storage = await createPgliteStorage({ pglite, schema });
  return {
    storage,
    raw: async (sql) => (await pglite.query<Record<string, unknown>>(sql)).rows,
    async close() {
      await storage.close();
      await pglite.exec(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE; RESET search_path`);
    },
  };
}

/** A fresh schema on a Postgres server, dropped again by `close()`; raw SQL on its own connection. */
export async function postgresHarness(connectionString: string): Promise<StorageHarness> {
  const schema = randomSchema();
  const storage = await createPostgresStorage({ connectionString, schema, poolSize: 4 });
  const raw = new pg.Client({ connectionString });
  await raw.connect();
  await raw.query(`SET search_path TO ${quoteIdentifier(schema)}`);
  return {
    storage,
    raw: async (sql) => (await raw.query(sql)).rows,
    openSecond: () => createPostgresStorage({ connectionString, schema, poolSize: 4 }),
    async close() {
      await storage.close();
      await raw.query(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`);
      await raw.end();
    },
  };
}
