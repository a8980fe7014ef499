import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Storage } from '@tollgate/core';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createScratchDatabase } from '../../helpers/multi-process-gateway.js';

/**
 * One database a reliability check runs on, with what the checks need to look underneath the
 * gateway: the storage API, raw SQL on a separate connection, and every byte the database holds.
 */
export interface ReliabilityDb {
  kind: 'sqlite' | 'postgres';
  /** What `tollgate … --db` takes: the SQLite file path or the Postgres URL. */
  location: string;
  /** The SQLite file (null on Postgres). */
  file: string | null;
  storage: Storage;
  /** One raw SQL statement on a connection of our own (not the storage's); rows for a query. */
  query(sql: string): Promise<Record<string, unknown>[]>;
  /** SQLite: the file with its `-wal`/`-shm`/`-journal` as raw bytes. Postgres: every column of every row, as text. */
  dump(): Promise<Buffer>;
  /** Closes our connections and removes the database (temp dir, schema or scratch database). */
  close(): Promise<void>;
}

export type DbKind = 'sqlite' | 'postgres';

/** SQLite always; Postgres when `TEST_DATABASE_URL` is set. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;
export const dbKinds: { kind: DbKind; skip: string | null }[] = [
  { kind: 'sqlite', skip: null },
  { kind: 'postgres', skip: TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set' },
];

/** A fresh SQLite file in a temp dir of its own. */
export async function openSqliteDb(): Promise<ReliabilityDb> {
  const { createSqliteStorage } = await import('@tollgate/storage-sqlite');
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-reliability-'));
  const file = join(dir, 'tollgate.db');
  const storage = await createSqliteStorage({ path: file });
  const raw = new BetterSqlite3(file);
  raw.pragma('busy_timeout = 10000');
  return {
    kind: 'sqlite',
    location: file,
    file,
    storage,
    async query(sql) {
      const statement = raw.prepare(sql);
      if (statement.reader) return statement.all() as Record<string, unknown>[];
      statement.run();
      return [];
    },
    async dump() {
      return Buffer.concat(
        [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]
          .filter((path) => existsSync(path))
          .map((path) => readFileSync(path)),
      );
    },
    async close() {
      await storage.close().catch(() => {});
      raw.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A scratch Postgres database of its own (`CREATE DATABASE`, dropped by `close`), in its default
 * schema, so that `tollgate serve --db <url>` processes and this storage see the same tables.
 */
export async function openPostgresDb(adminUrl: string): Promise<ReliabilityDb> {
  const { createPostgresStorage } = await import('@tollgate/storage-postgres');
  const scratch = await createScratchDatabase(adminUrl);
  const storage = await createPostgresStorage({ connectionString: scratch.url, poolSize: 4 });
  const raw = new pg.Client({ connectionString: scratch.url });
  await raw.connect();
  const query = async (sql: string) => (await raw.query(sql)).rows as Record<string, unknown>[];
  return {
    kind: 'postgres',
    location: scratch.url,
    file: null,
    storage,
    query,
    dump: () => dumpPostgres(query),
    async close() {
      await storage.close().catch(() => {});
      await raw.end().catch(() => {});
      await scratch.drop();
    },
  };
}

export function openDb(kind: DbKind): Promise<ReliabilityDb> {
  if (kind === 'sqlite') return openSqliteDb();
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  return openPostgresDb(TEST_DATABASE_URL);
}

/** Every row of every table of the public schema as text, then every column of every row on its own. */
async function dumpPostgres(query: (sql: string) => Promise<Record<string, unknown>[]>): Promise<Buffer> {
  const out: string[] = [];
  const tables = await query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()`,
  );
  for (const { table_name } of tables) {
    for (const row of await query(`SELECT t::text AS row FROM "${String(table_name)}" t`)) {
      out.push(String(row.row));
    }
  }
  const columns = await query(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema()`,
  );
  for (const { table_name, column_name } of columns) {
    for (const row of await query(
      `SELECT "${String(column_name)}"::text AS v FROM "${String(table_name)}"`,
    )) {
      if (row.v !== null) out.push(String(row.v));
    }
  }
  return Buffer.from(out.join('\n'));
}

/** A SQL string literal (quotes doubled); ids come from the gateway, but be safe. */
export function lit(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/** int8 arrives as a string from pg and as a number or bigint from SQLite. */
export function num(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint' || typeof value === 'string') return Number(value);
  if (value === null || value === undefined) return 0;
  throw new Error(`expected a numeric column value, got ${typeof value}`);
}

/** A random suffix for names. */
export function randomSuffix(): string {
  return randomBytes(5).toString('hex');
}
