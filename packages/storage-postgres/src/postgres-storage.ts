import { type AuthChangeFeed, type Storage, withAuthChangeFeed } from '@tollgate/core';
import { createKyselyStorage, type Database } from '@tollgate/storage-kysely';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { authChannelName, serverChannel } from './auth-change-feed.js';
import { preparePostgres, useSchema } from './migrate-postgres.js';
import { postgresCapabilities } from './postgres-capabilities.js';
import { createPostgresMetering } from './postgres-metering.js';
import { PreparingClient } from './preparing-client.js';

/** Options of {@link createPostgresStorage}. */
export interface PostgresStorageOptions {
  /** A `postgres://` URL. */
  connectionString: string;
  /** A schema to keep every table in (created when missing); default: the server's search_path. */
  schema?: string;
  /** Most connections the pool opens; default 10. */
  poolSize?: number;
  /**
   * Run parameterised statements as named prepared statements (default true; see
   * `PreparingClient`). Turn off behind a pooler that does not keep them per client, such as
   * PgBouncer in transaction mode before 1.21.
   */
  prepareStatements?: boolean;
  /**
   * How long a call waits for a connection (queued behind the pool's others, or connecting) before
   * it fails; default: no limit. A server that accepts and never answers would otherwise leave
   * every call queued for good (`tollgate serve` passes `--db-timeout-ms`).
   */
  connectTimeoutMs?: number;
}

/**
 * Connects to Postgres with a pg pool, brings the schema up to date and returns it as a `Storage`.
 * Several gateway processes may share one database: balances move by `UPDATE … RETURNING` under
 * row locks, migrations run under an advisory lock, and key and account changes are announced to
 * every process (`LISTEN`/`NOTIFY`, see `withAuthChangeFeed`).
 */
export async function createPostgresStorage(
  options: PostgresStorageOptions,
): Promise<Storage & AuthChangeFeed> {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.poolSize ?? 10,
    ...(options.connectTimeoutMs !== undefined && { connectionTimeoutMillis: options.connectTimeoutMs }),
    ...(options.prepareStatements === false ? {} : { Client: PreparingClient }),
  });
  // An idle connection dropped by the server (a restart, a failover) is an 'error' event on the pool;
  // unheard, Node would end the process. pg discards that connection and the next query reports
  // the outage to its caller, so there is nothing more to do here.
  pool.on('error', () => {});
  // The same for a connection checked out between two statements (a transaction's, a failover
  // mid-request): the pool listens only to idle ones. The statement that needs it fails instead.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({
      pool,
      ...(options.schema !== undefined ? { onCreateConnection: useSchema(options.schema) } : {}),
    }),
  });
  try {
    await preparePostgres(db, options.schema);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  const channel = serverChannel(pool, options.connectionString, authChannelName(options.schema));
  return withAuthChangeFeed(
    createKyselyStorage(db, postgresCapabilities, { metering: createPostgresMetering }),
    channel,
  );
}
