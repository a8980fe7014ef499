import type { EpochMs } from '@tollgate/core';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './database.js';
import type { DialectCapabilities } from './dialect-capabilities.js';

/** What every query function needs: the database, its dialect, and the clock. */
export interface QueryContext {
  readonly db: Kysely<Database>;
  readonly dialect: DialectCapabilities;
  readonly now: () => EpochMs;
  /**
   * Called at the end of a write transaction's work: the promise that settles once that transaction
   * is durably committed. Absent when the commit is the transaction's own (Postgres); the SQLite
   * adapter commits transactions in groups, so there it resolves a little later.
   */
  readonly committed?: () => Promise<void>;
  /**
   * The adapter's own way to run a write transaction, where it has one cheaper than kysely's
   * `db.transaction().execute()` (SQLite: a savepoint of the open commit group, without kysely's
   * per-transaction builder, executors and connection providers). Same contract as {@link write}:
   * the work runs in one transaction, which is undone if the work throws, and the promise settles
   * once that transaction is durably committed.
   */
  readonly transact?: <T>(work: (trx: Transaction<Database>) => Promise<T>) => Promise<T>;
}

/**
 * Runs a write in a transaction and resolves once it is committed. On SQLite the adapter's driver
 * begins with `BEGIN IMMEDIATE`, taking the write lock up front, and waits for it without blocking
 * the event loop. A write that is one atomic statement may instead run on `ctx.db` directly (the
 * hot rate-limit upsert does, saving a BEGIN and a COMMIT): the SQLite driver waits for the lock of
 * such a statement in the same way.
 */
export async function write<T>(
  ctx: QueryContext,
  work: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  if (ctx.transact) return ctx.transact(work);
  let durable: Promise<void> | undefined;
  const result = await ctx.db.transaction().execute(async (trx) => {
    const value = await work(trx);
    durable = ctx.committed?.();
    return value;
  });
  await durable;
  return result;
}

/** Throws unless `value` is a safe integer (or, when allowed, null/undefined). */
export function assertInteger(name: string, value: unknown, options: { nullable?: boolean } = {}): void {
  if (options.nullable && (value === null || value === undefined)) return;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new RangeError(`${name} must be a safe integer, got ${String(value)}`);
  }
}
