import type { Storage } from '@tollgate/core';
import { ConfigFileError, type LoadedConfig, loadConfigFile } from '../config-file.js';
import { DEFAULT_DB, type OpenStorageOptions, openStorage, StorageOpenError } from '../open-storage.js';
import { CliError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';

/** The `--db` value in effect: the flag, else `DATABASE_URL`, else `./tollgate.db`. */
export function dbOption(db: string | undefined, io: CliIo): string {
  return db ?? (io.env.DATABASE_URL || DEFAULT_DB);
}

/**
 * Opens the storage (with `options`), runs `fn`, and always closes the storage again. A SQLite file
 * that does not exist is refused (`CliError` naming it) unless `create` (`serve`,
 * `account create --create`).
 */
export async function withStorage<T>(
  db: string | undefined,
  io: CliIo,
  fn: (storage: Storage) => Promise<T>,
  options: OpenStorageOptions = {},
): Promise<T> {
  let storage: Storage;
  try {
    storage = await openStorage(dbOption(db, io), io.cwd, { ...options, create: options.create ?? false });
  } catch (error) {
    const message = (error as Error).message;
    throw new CliError(error instanceof StorageOpenError ? message : `cannot open the database: ${message}`);
  }
  try {
    return await fn(storage);
  } finally {
    await storage.close();
  }
}

/** Loads the config (`--config`, `TOLLGATE_CONFIG`, default, example); a bad file is a `CliError`. */
export function loadConfig(config: string | undefined, io: CliIo): LoadedConfig {
  try {
    return loadConfigFile({ path: config, env: io.env, cwd: io.cwd });
  } catch (error) {
    if (error instanceof ConfigFileError) throw new CliError(error.message);
    throw error;
  }
}

/** The config's default rate limit, for display only: `undefined` when the config cannot be loaded. */
export function configDefaultRpm(config: string | undefined, io: CliIo): number | undefined {
  try {
    return loadConfig(config, io).config.defaults.rate_limit_rpm;
  } catch {
    return undefined;
  }
}

/** The account, or a `CliError` naming the id. */
export async function requireAccount(storage: Storage, id: string) {
  const account = await storage.getAccount(id);
  if (!account) throw new CliError(`no account with id "${id}"`);
  return account;
}
