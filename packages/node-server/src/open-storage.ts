import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Storage } from '@tollgate/core';

/** The database used when neither `--db` nor `DATABASE_URL` names one. */
export const DEFAULT_DB = './tollgate.db';

export interface StorageTarget {
  kind: 'sqlite' | 'postgres';
  /** A file path (absolute, or `:memory:`) for SQLite; the connection string for Postgres. */
  location: string;
}

/**
 * Picks the adapter for `--db URL_OR_PATH`: `postgres://` and `postgresql://` select Postgres,
 * anything else is a SQLite file (a `file:` URL or a path, relative to `cwd`).
 */
export function resolveStorageTarget(db: string, cwd: string = process.cwd()): StorageTarget {
  if (/^postgres(ql)?:\/\//i.test(db)) return { kind: 'postgres', location: db };
  if (db === ':memory:') return { kind: 'sqlite', location: db };
  const path = db.startsWith('file:') ? fileURLToPath(db) : db;
  return { kind: 'sqlite', location: isAbsolute(path) ? path : resolve(cwd, path) };
}

/**
 * Opens (and migrates) the storage for `--db` / `DATABASE_URL` / `./tollgate.db`. Adapters are
 * imported on demand, so a SQLite deployment never loads the Postgres driver and vice versa.
 */
export async function openStorage(db: string = DEFAULT_DB, cwd: string = process.cwd()): Promise<Storage> {
  const target = resolveStorageTarget(db, cwd);
  if (target.kind === 'postgres') {
    const { createPostgresStorage } = await import('@tollgate/storage-postgres');
    return createPostgresStorage({ connectionString: target.location });
  }
  const { createSqliteStorage } = await import('@tollgate/storage-sqlite');
  return createSqliteStorage({ path: target.location });
}
