import type { RateLimitHit, RateLimitInput } from '@tollgate/core';
import { prepareQuery } from './prepared-query.js';
import { assertInteger, type QueryContext } from './query-context.js';
import { toInteger } from './row-mappers.js';
import { slidingWindowDecision, weightedEstimate, windowStart } from './sliding-window.js';

/**
 * `Storage.hitRateLimit`: the sliding-window counter of `sliding-window.ts` over
 * `rate_limit_windows(subject, window_start, count)`, in two statements and no transaction (each is
 * atomic on its own, and the second is the only write; see `write` for why a single-statement write
 * may run outside one):
 * 1. read the previous window's count, which weighs on the current window as a fixed amount: a hit
 *    is admitted while the current count stays below `allowance = limit − ⌊previous × (windowMs −
 *    elapsedMs) / windowMs⌋`;
 * 2. when `allowance > 0`, count the hit in one atomic upsert: `INSERT … count = 1 ON CONFLICT DO
 *    UPDATE SET count = count + 1 WHERE count < allowance RETURNING count`. The database decides
 *    under the row's lock (Postgres re-checks the `WHERE` on the latest committed row after waiting
 *    for a concurrent hit; SQLite holds the write lock), so exactly `limit` hits are admitted however
 *    many arrive at once, across connections and processes. No row back means refused.
 * Only a refused hit reads the current count again, for its `retryAfterMs`. A refused hit changes
 * nothing. The previous window is read without a lock, as before: it only changes while a hit
 * stamped in it is still landing.
 */
export async function hitRateLimit(ctx: QueryContext, input: RateLimitInput): Promise<RateLimitHit> {
  assertInteger('limit', input.limit);
  assertInteger('windowMs', input.windowMs);
  assertInteger('now', input.now);
  if (input.limit < 1) throw new RangeError('a rate limit must admit at least one request');
  if (input.windowMs < 1) throw new RangeError('a rate-limit window must be at least 1 ms');
  const { subject, limit, windowMs, now } = input;
  const current = windowStart(now, windowMs);
  const elapsedMs = now - current;

  const previous = await windowCount(ctx, subject, current - windowMs);
  const allowance = limit - Number(weightedEstimate(previous, 0, windowMs, elapsedMs));
  if (allowance > 0) {
    const counted = await countHit.first(ctx, { subject, windowStart: current, allowance });
    if (counted) return { allowed: true, retryAfterMs: 0 };
  }
  const decision = slidingWindowDecision({
    previous,
    current: await windowCount(ctx, subject, current),
    limit,
    windowMs,
    elapsedMs,
  });
  // The count was read after the refusal; should a sweep have dropped the row in between, the hit
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

/** Counts a hit unless the window already holds `allowance`; a row back means counted. */
const countHit = prepareQuery((db, p: { subject: string; windowStart: number; allowance: number }) =>
  db
    .insertInto('rate_limit_windows')
    .values({ subject: p.subject, window_start: p.windowStart, count: 1 })
    .onConflict((oc) =>
      oc
        .columns(['subject', 'window_start'])
        .doUpdateSet((eb) => ({ count: eb('rate_limit_windows.count', '+', 1) }))
        .where('rate_limit_windows.count', '<', p.allowance),
    )
    .returning('count'),
);
