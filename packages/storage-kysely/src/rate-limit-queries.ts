import type { RateLimitHit, RateLimitInput } from '@tollgate/core';
import { type Kysely, sql } from 'kysely';
import type { Database } from './database.js';
import { prepareQuery } from './prepared-query.js';
import { assertInteger, type QueryContext } from './query-context.js';
import { toInteger } from './row-mappers.js';
import { slidingWindowDecision, windowStart } from './sliding-window.js';

/**
 * `Storage.hitRateLimit`: the sliding-window counter of `sliding-window.ts` over
 * `rate_limit_windows(subject, window_start, count)`, in ONE statement and no transaction (see
 * `write` for why a single-statement write may run outside one). The previous window's count weighs
 * on the current window as a fixed amount: a hit is admitted while the current count stays below
 * `allowance = limit − ⌊previous × (windowMs − elapsedMs) / windowMs⌋`. The statement reads the
 * previous window's row for that, in a subquery, and counts the hit with an upsert:
 * `INSERT … SELECT …, 1 WHERE allowance > 0 ON CONFLICT DO UPDATE SET count = count + 1 WHERE count <
 * allowance RETURNING count`. The database decides under the row's lock (Postgres re-checks the
 * `WHERE` on the latest committed row after waiting for a concurrent hit; SQLite holds the write
 * lock), so exactly `limit` hits are admitted however many arrive at once, across connections and
 * processes. No row back means refused. Only a refused hit reads both counts again, for its
 * `retryAfterMs`; a refused hit changes nothing. The previous window is read without a lock: it
 * only changes while a hit stamped in it is still landing.
 */
export async function hitRateLimit(
  ctx: QueryContext,
  input: RateLimitInput,
  count: CountHit = countHitNow,
): Promise<RateLimitHit> {
  const params = hitParams(input);
  if (await count(ctx, params)) return { allowed: true, retryAfterMs: 0 };
  return refusedHit(ctx, input);
}

/** The parameters of `input`'s count (`countHit`); throws on a limit, window or clock no count accepts. */
export function hitParams(input: RateLimitInput): HitParams {
  assertInteger('limit', input.limit);
  assertInteger('windowMs', input.windowMs);
  assertInteger('now', input.now);
  if (input.limit < 1) throw new RangeError('a rate limit must admit at least one request');
  if (input.windowMs < 1) throw new RangeError('a rate-limit window must be at least 1 ms');
  const { subject, limit, windowMs, now } = input;
  const current = windowStart(now, windowMs);
  const elapsedMs = now - current;
  return {
    subject,
    windowStart: current,
    previousStart: current - windowMs,
    limit,
    remainingMs: windowMs - elapsedMs,
    windowMs,
  };
}

/** The answer to a hit that was not counted: both windows' counts read again for its `retryAfterMs`. */
export async function refusedHit(ctx: QueryContext, input: RateLimitInput): Promise<RateLimitHit> {
  const { subject, limit, windowMs, now } = input;
  const current = windowStart(now, windowMs);
  const decision = slidingWindowDecision({
    previous: await windowCount(ctx, subject, current - windowMs),
    current: await windowCount(ctx, subject, current),
    limit,
    windowMs,
    elapsedMs: now - current,
  });
  // The counts were read after the refusal; should a sweep have dropped a row in between, the hit
  // is still refused (it was not counted).
  return decision.allowed ? { allowed: false, retryAfterMs: 0 } : decision;
}

/** The count of one window, 0 when it has no row. */
async function windowCount(ctx: QueryContext, subject: string, start: number): Promise<number> {
  const row = await windowRow.first(ctx, { subject, windowStart: start });
  return row ? toInteger(row.count) : 0;
}

const windowRow = prepareQuery((db, p: { subject: string; windowStart: number }) =>
  db
    .selectFrom('rate_limit_windows')
    .select('count')
    .where('subject', '=', p.subject)
    .where('window_start', '=', p.windowStart),
);

/**
 * Counts one hit as `countHit` does and says whether it was counted: this statement on its own, or
 * (an adapter's metering path, `MeteringPath.countRateLimitHit`; Postgres: one call of a
 * group-committed batch of them).
 */
export type CountHit = (ctx: QueryContext, params: HitParams) => Promise<boolean>;

/**
 * The statement on its own; where the adapter has a cheaper transaction than kysely's (SQLite's
 * savepoint of its commit group, whose statements skip kysely's executor), as that transaction's
 * one statement, which costs less than the statement alone through kysely.
 */
export const countHitNow: CountHit = (ctx, params) =>
  ctx.transact ? ctx.transact((trx) => countHitIn(ctx, params, trx)) : countHitIn(ctx, params);

/** `countHit` on its own, or as a statement of the transaction `trx`; whether the hit was counted. */
export async function countHitIn(
  ctx: QueryContext,
  params: HitParams,
  trx?: Kysely<Database>,
): Promise<boolean> {
  return (await countHit.first(ctx, params, trx)) !== undefined;
}

export interface HitParams {
  subject: string;
  windowStart: number;
  previousStart: number;
  limit: number;
  /** `windowMs − elapsedMs`: the part of the previous window still inside the sliding window. */
  remainingMs: number;
  windowMs: number;
}

/** Counts a hit unless the window already holds `allowance` (computed in SQL); a row back means counted. */
const countHit = prepareQuery((db, p: HitParams) => {
  const bigint = (value: number) => sql<number>`cast(${value} as bigint)`;
  const previousCount = db
    .selectFrom('rate_limit_windows')
    .select('count')
    .where('subject', '=', p.subject)
    .where('window_start', '=', bigint(p.previousStart));
  // limit − ⌊previous × remaining / window⌋; integer division of non-negative integers is a floor
  // in both databases, as in `weightedEstimate`.
  const allowance = sql<number>`${bigint(p.limit)} - coalesce((${previousCount}), 0) * ${bigint(p.remainingMs)} / ${bigint(p.windowMs)}`;
  return db
    .insertInto('rate_limit_windows')
    .columns(['subject', 'window_start', 'count'])
    .expression(
      db
        .selectNoFrom([
          sql<string>`${p.subject}`.as('subject'),
          bigint(p.windowStart).as('window_start'),
          sql.lit(1).as('count'),
        ])
        .where(allowance, '>', 0),
    )
    .onConflict((oc) =>
      oc
        .columns(['subject', 'window_start'])
        .doUpdateSet((eb) => ({ count: eb('rate_limit_windows.count', '+', 1) }))
        .where('rate_limit_windows.count', '<', allowance),
    )
    .returning('count');
});
