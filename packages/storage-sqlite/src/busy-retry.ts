import { setTimeout as sleep } from 'node:timers/promises';
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';

/**
 * Runs `query`, and while it fails with SQLITE_BUSY runs it again after an async sleep, until
 * `busyTimeoutMs` has passed. better-sqlite3 is synchronous, so SQLite's own busy handler would
 * freeze the event loop while it waits, and when the lock holder is another connection in this same
 * process (a second storage on the file, as tests and embedders do), it could then never finish.
 * So `ImmediateSqliteDriver`'s connection runs with `busy_timeout = 0` and retries here, with
 * jitter, exactly where SQLite says a busy statement may be retried: outside a transaction (the
 * statement did nothing; this covers `BEGIN IMMEDIATE` itself and plain reads) and for `COMMIT`
 * (the transaction stays open).
 */
export async function whenNotBusy<R>(
  connection: DatabaseConnection,
  query: CompiledQuery,
  busyTimeoutMs: number,
): Promise<QueryResult<R>> {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      return await connection.executeQuery<R>(query);
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
    }
    // About a millisecond, not growing: another process's group holds the lock for a turn of its
    // event loop, so the lock frees up often, and a longer wait only idles this process (with two
    // workers, an exponential backoff to 50 ms cost a quarter of their throughput).
    await sleep(Math.min(0.5 + Math.random(), Math.max(0, deadline - Date.now())));
  }
}

/** SQLITE_BUSY and its extended codes (SQLITE_BUSY_RECOVERY, …), as better-sqlite3 reports them. */
function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}
