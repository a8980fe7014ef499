import { setTimeout as sleep } from 'node:timers/promises';
import { CompiledQuery, type DatabaseConnection, type SqliteDialectConfig, SqliteDriver } from 'kysely';

/**
 * kysely's SQLite driver, except that every transaction begins with `BEGIN IMMEDIATE`, and waits for
 * the write lock in JS rather than inside SQLite.
 *
 * `IMMEDIATE` takes the write lock up front. A plain (deferred) `BEGIN` reads first and upgrades
 * later; two processes doing that can each hold a read snapshot the other must wait out, and one of
 * them fails with SQLITE_BUSY however long the timeout.
 *
 * Waiting in JS: better-sqlite3 is synchronous, so SQLite's own busy handler would freeze the event
 * loop while it waits. When the lock holder is another connection in this same process (a second
 * storage on the file, as tests and embedders do), it could then never finish and release the lock.
 * So the `BEGIN IMMEDIATE` itself runs with `busy_timeout = 0` and is retried after a short async
 * sleep, with jitter, until `busyTimeoutMs` has passed.
 */
export class ImmediateSqliteDriver extends SqliteDriver {
  readonly #busyTimeoutMs: number;

  constructor(config: SqliteDialectConfig, busyTimeoutMs: number) {
    super(config);
    this.#busyTimeoutMs = busyTimeoutMs;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const deadline = Date.now() + this.#busyTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#tryBeginImmediate(connection);
        return;
      } catch (error) {
        if (!isBusy(error) || Date.now() >= deadline) throw error;
      }
      const backoffMs = Math.min(2 ** attempt, 50) * (0.5 + Math.random());
      await sleep(Math.min(backoffMs, Math.max(0, deadline - Date.now())));
    }
  }

  async #tryBeginImmediate(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('pragma busy_timeout = 0'));
    try {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    } finally {
      await connection.executeQuery(CompiledQuery.raw(`pragma busy_timeout = ${this.#busyTimeoutMs}`));
    }
  }
}

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, …), as better-sqlite3 reports them. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
