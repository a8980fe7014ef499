import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Storage } from '@tollgate/core';
import pg from 'pg';

/** One opened, migrated storage for a test file, plus what the tests need to look underneath it. */
export interface OpenedStorage {
  storage: Storage;
  /**
   * Everything the database holds, as text or bytes, for "this secret never landed" checks:
   * the SQLite file and its WAL as raw bytes; every row of every table of the Postgres schema.
   */
  dump(): Promise<Buffer>;
  /** Removes what `open` made (temp dir, schema). Call after the storage is closed. */
  dispose(): Promise<void>;
}

export interface StorageVariant {
  name: 'sqlite' | 'pglite' | 'postgres';
  /** When set, suites on this variant are skipped and the reason is printed. */
  skipReason?: string;
  open(): Promise<OpenedStorage>;
}

/** A fresh SQLite file in its own temp dir (or at `path` when given: the caller owns that file). */
export async function openSqlite(path?: string): Promise<OpenedStorage & { path: string }> {
  const { createSqliteStorage } = await import('@tollgate/storage-sqlite');
  const dir = path ? undefined : mkdtempSync(join(tmpdir(), 'tollgate-e2e-'));
  const file = path ?? join(dir!, 'tollgate.db');
  const storage = await createSqliteStorage({ path: file });
  return {
    storage,
    path: file,
    async dump() {
      const parts = [file, `${file}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p));
      return Buffer.concat(parts);
    },
    async dispose() {
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** PGlite in-process; `dump` reads every row of every table as text, straight from the instance. */
export async function openPglite(): Promise<OpenedStorage> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgliteStorage } = await import('@tollgate/storage-postgres');
  const pglite = await PGlite.create();
  const storage = await createPgliteStorage({ pglite: pglite as never });
  return {
    storage,
    async dump() {
      const tables = await pglite.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      const lines: string[] = [];
      for (const { table_name } of tables.rows) {
        const rows = await pglite.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
        for (const { row } of rows.rows) lines.push(row);
      }
      return Buffer.from(lines.join('\n'));
    },
    async dispose() {
      await pglite.close();
    },
  };
}

/** Runs `use` with a connected `pg` client on `connectionString`, then ends the client. */
export async function withPgClient<T>(
  connectionString: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/** How `openPostgres` names its schema and how much its `dump` reads. */
export interface PostgresOptions {
  /** The schema name's prefix (a random suffix is added). Default `tollgate_e2e`. */
  prefix?: string;
  /** Also dump every column of every table cast to text one by one (json, bytea, arrays, …). */
  everyColumn?: boolean;
}

/** A fresh, randomly named schema on `connectionString`'s server (dropped by `dispose`), with its name. */
export async function openPostgres(
  connectionString: string,
  options: PostgresOptions = {},
): Promise<OpenedStorage & { schema: string }> {
  const { createPostgresStorage } = await import('@tollgate/storage-postgres');
  const schema = `${options.prefix ?? 'tollgate_e2e'}_${randomBytes(6).toString('hex')}`;
  const storage = await createPostgresStorage({ connectionString, schema });
  return {
    storage,
    schema,
    dump: () =>
      withPgClient(connectionString, async (client) => {
        const lines: string[] = [];
        const tables = await client.query<{ table_name: string }>(
          'SELECT table_name FROM information_schema.tables WHERE table_schema = $1',
          [schema],
        );
        for (const { table_name } of tables.rows) {
          const rows = await client.query<{ row: string }>(
            `SELECT t::text AS row FROM "${schema}"."${table_name}" t`,
          );
          for (const { row } of rows.rows) lines.push(row);
        }
        if (options.everyColumn) {
          const columns = await client.query<{ table_name: string; column_name: string }>(
            'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1',
            [schema],
          );
          for (const { table_name, column_name } of columns.rows) {
            const rows = await client.query<{ v: string | null }>(
              `SELECT "${column_name}"::text AS v FROM "${schema}"."${table_name}"`,
            );
            for (const { v } of rows.rows) if (v !== null) lines.push(v);
          }
        }
        return Buffer.from(lines.join('\n'));
      }),
    dispose: () =>
      withPgClient(connectionString, async (client) => {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      }),
  };
}

const databaseUrl = process.env.TEST_DATABASE_URL;

/** Every storage the end-to-end suites run on: SQLite always, Postgres when `TEST_DATABASE_URL` is set. */
export const storageVariants: StorageVariant[] = [
  { name: 'sqlite', open: () => openSqlite() },
  {
    name: 'postgres',
    ...(databaseUrl ? {} : { skipReason: 'TEST_DATABASE_URL is not set' }),
    open: () => openPostgres(databaseUrl!),
  },
];

/**
 * The in-process suites' storages: SQLite and PGlite always, Postgres when `TEST_DATABASE_URL` is
 * set (its `dump` also reads every column on its own).
 */
export const storageVariantsWithPglite: StorageVariant[] = [
  { name: 'sqlite', open: () => openSqlite() },
  { name: 'pglite', open: openPglite },
  {
    name: 'postgres',
    ...(databaseUrl ? {} : { skipReason: 'TEST_DATABASE_URL is not set' }),
    open: () => openPostgres(databaseUrl!, { everyColumn: true }),
  },
];
