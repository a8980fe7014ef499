import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Storage } from '@tollgate/core';

/** How to open the storage. */
export interface OpenStorageOptions {
  /** Postgres: how long the pool waits for a connection before the call fails (default: no limit). */
  connectTimeoutMs?: number;
  /** SQLite: create the file when it does not exist (`serve`); otherwise a missing file is refused. */
  create?: boolean;
}

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
 * imported on demand, so a SQLite deployment never loads the Postgres driver and vice versa. With
 * `create: false`, a SQLite file that does not exist is refused rather than created empty (a
 * mistyped path would otherwise look like an empty database).
 */
export async function openStorage(
  db: string = DEFAULT_DB,
  cwd: string = process.cwd(),
  options: OpenStorageOptions = {},
): Promise<Storage> {
  const target = resolveStorageTarget(db, cwd);
  if (target.kind === 'postgres') {
    const { createPostgresStorage } = await import('@tollgate/storage-postgres');
    const { create: _create, ...postgres } = options;
    return createPostgresStorage({ connectionString: target.location, ...postgres });
  }
  if (options.create === false && target.location !== ':memory:' && !existsSync(target.location)) {
    const problem = sqlitePathProblem(target.location);
    throw new StorageOpenError(
      problem
        ? `cannot open the SQLite database ${target.location}: ${problem}`
        : `cannot open the SQLite database ${target.location}: the file does not exist (tollgate serve creates it, and so does tollgate account create --create)`,
    );
  }
  const { createSqliteStorage } = await import('@tollgate/storage-sqlite');
  try {
    return await createSqliteStorage({ path: target.location });
  } catch (error) {
    const problem = sqlitePathProblem(target.location) ?? (error as Error).message;
    throw new StorageOpenError(`cannot open the SQLite database ${target.location}: ${problem}`, {
      cause: error,
    });
  }
}

/** A database that could not be opened; the message names the SQLite file and what is wrong with it. */
export class StorageOpenError extends Error {
  override name = 'StorageOpenError';
}

/** Why SQLite cannot open or create a file at `path`, when the file system says so; else `undefined`. */
function sqlitePathProblem(path: string): string | undefined {
  if (path === ':memory:') return undefined;
  const dir = dirname(path);
  try {
    if (!statSync(dir).isDirectory()) return `${dir} is not a directory`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `the directory ${dir} does not exist`;
    if (code === 'ENOTDIR') return `${dir} is not a directory`;
    return undefined;
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return `the directory ${dir} is not writable (SQLite creates its journal next to the file)`;
  }
  try {
    if (statSync(path).isDirectory()) return `${path} is a directory`;
    accessSync(path, constants.R_OK | constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return `${path} is not readable and writable`;
  }
  return undefined;
}
