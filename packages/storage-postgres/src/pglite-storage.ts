import { type AuthChangeFeed, type Storage, withAuthChangeFeed } from '@tollgate/core';
import { createKyselyStorage, type Database } from '@tollgate/storage-kysely';
import { Kysely, type PGlite, PGliteDialect } from 'kysely';
import { authChannelName, pgliteChannel } from './auth-change-feed.js';
import { preparePostgres, useSchema } from './migrate-postgres.js';
import { postgresCapabilities } from './postgres-capabilities.js';
import { createPostgresMetering } from './postgres-metering.js';

/** Options of {@link createPgliteStorage}. */
export interface PgliteStorageOptions {
  /** A schema to keep every table in (created when missing); it becomes the instance's search_path. */
  schema?: string;
  /**
   * An instance to use instead of a fresh in-memory one. The caller keeps it: `close()` leaves it
   * open. Its one session's search_path is set to `schema`, so give each concurrent storage its own
   * instance.
   */
  pglite?: PGlite;
}

/**
 * Postgres in-process (PGlite, WebAssembly), for tests and demos without a database server. The
 * same schema, triggers and queries as {@link createPostgresStorage}. `@electric-sql/pglite` is an
 * optional peer dependency, loaded only when no instance is passed.
 */
export async function createPgliteStorage(
  options: PgliteStorageOptions = {},
): Promise<Storage & AuthChangeFeed> {
  const owned = options.pglite === undefined;
  const pglite = options.pglite ?? (await createInMemoryPglite());
  const db = new Kysely<Database>({
    dialect: new PGliteDialect({
      pglite,
      ...(options.schema !== undefined ? { onCreateConnection: useSchema(options.schema) } : {}),
    }),
  });
  try {
    await preparePostgres(db, options.schema);
  } catch (error) {
    if (owned) await db.destroy();
    throw error;
  }
  const kysely = createKyselyStorage(db, postgresCapabilities, { metering: createPostgresMetering });
  // kysely's destroy() would close the instance, which belongs to the caller.
  const storage = owned ? kysely : { ...kysely, close: async () => {} };
  return withAuthChangeFeed(storage, pgliteChannel(pglite, authChannelName(options.schema)));
}

async function createInMemoryPglite(): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite');
  return PGlite.create();
}
