import { setTimeout as sleep } from 'node:timers/promises';
import {
  CompiledQuery,
  type DatabaseConnection,
  type QueryResult,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';

/**
 * kysely's SQLite driver, except that every transaction begins with `BEGIN IMMEDIATE`, and waits for
 * locks in JS rather than inside SQLite.
 *
 * `IMMEDIATE` takes the write lock up front. A plain (deferred) `BEGIN` reads first and upgrades
 * later; two processes doing that can each hold a read snapshot the other must wait out, and one of
 * them fails with SQLITE_BUSY however long the timeout.
 *
 * Waiting in JS: better-sqlite3 is synchronous, so SQLite's own busy handler would freeze the event
 * loop while it waits. When the lock holder is another connection in this same process (a second
 * storage on the file, as tests and embedders do), it could then never finish and release the lock.
 * So the connection runs with `busy_timeout = 0` (set once when it is opened) and a statement that
 * fails with SQLITE_BUSY is retried after a short async sleep, with jitter, until `busyTimeoutMs`
 * has passed. That is safe exactly where SQLite says a busy statement may be retried: outside a
 * transaction (the statement did nothing; this covers `BEGIN IMMEDIATE` itself and plain reads) and
 * for `COMMIT` (the transaction stays open). Inside a transaction nothing else can be busy in WAL
 * mode, since `BEGIN IMMEDIATE` already holds the write lock; should it happen anyway (a database
 * that is not in WAL mode), the error rolls the transaction back as any failure does.
 */
export class ImmediateSqliteDriver extends SqliteDriver {
  readonly #busyTimeoutMs: number;
  #connection: DatabaseConnection | undefined;
  #inTransaction = false;

  constructor(config: SqliteDialectConfig, busyTimeoutMs: number) {
    super(config);
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    // kysely hands out the one connection under a mutex; the wrapper is made once.
    this.#connection ??= this.#retryingWhenBusy(await super.acquireConnection());
    return this.#connection;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(BEGIN_IMMEDIATE);
    this.#inTransaction = true;
  }

  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A busy COMMIT leaves the transaction open, so it is retried like a statement outside one.
    this.#inTransaction = false;
    try {
      await connection.executeQuery(COMMIT);
    } catch (error) {
      // Still open: kysely rolls it back next.
      this.#inTransaction = true;
      throw error;
    }
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(ROLLBACK);
    } finally {
      this.#inTransaction = false;
    }
  }

  #retryingWhenBusy(connection: DatabaseConnection): DatabaseConnection {
    return {
      executeQuery: <R>(query: CompiledQuery): Promise<QueryResult<R>> =>
        this.#inTransaction ? connection.executeQuery<R>(query) : this.#whenNotBusy(connection, query),
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
  }

  async #whenNotBusy<R>(connection: DatabaseConnection, query: CompiledQuery): Promise<QueryResult<R>> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await connection.executeQuery<R>(query);
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      const backoffMs = Math.min(2 ** attempt, 50) * (0.5 + Math.random());
      await sleep(Math.min(backoffMs, Math.max(0, deadline - Date.now())));
    }
  }
}

const BEGIN_IMMEDIATE = CompiledQuery.raw('begin immediate');
const COMMIT = CompiledQuery.raw('commit');
const ROLLBACK = CompiledQuery.raw('rollback');

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, …), as better-sqlite3 reports them. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
