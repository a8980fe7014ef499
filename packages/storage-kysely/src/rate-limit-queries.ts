import type { RateLimitHit, RateLimitInput } from '@tollgate/core';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { toInteger } from './row-mappers.js';
import { slidingWindowDecision, windowStart } from './sliding-window.js';

/**
 * `Storage.hitRateLimit`: the sliding-window counter of `sliding-window.ts` over
 * `rate_limit_windows(subject, window_start, count)`, in one write transaction:
 * 1. make sure the current window's row exists (`INSERT … ON CONFLICT DO NOTHING`, count 0);
 * 2. lock it (Postgres: `SELECT … FOR UPDATE`, which waits for a concurrent hit to commit and then
 *    reads its count; SQLite: the transaction already holds the write lock) and read the previous
 *    window's count;
 * 3. when admitted, `count = count + 1` on the locked row.
 * Every hit on a subject thus serialises on its current row, across connections and processes, so
 * exactly `limit` hits are admitted however many arrive at once. A refused hit changes nothing
 * (the row it may have created holds 0).
 */
export async function hitRateLimit(ctx: QueryContext, input: RateLimitInput): Promise<RateLimitHit> {
  assertInteger('limit', input.limit);
  assertInteger('windowMs', input.windowMs);
  assertInteger('now', input.now);
  if (input.limit < 1) throw new RangeError('a rate limit must admit at least one request');
  if (input.windowMs < 1) throw new RangeError('a rate-limit window must be at least 1 ms');
  const { subject, limit, windowMs, now } = input;
  const current = windowStart(now, windowMs);
  const previous = current - windowMs;

  return write(ctx, async (trx) => {
    await trx
      .insertInto('rate_limit_windows')
      .values({ subject, window_start: current, count: 0 })
      .onConflict((oc) => oc.columns(['subject', 'window_start']).doNothing())
      .execute();
    const locked = await trx
      .selectFrom('rate_limit_windows')
      .select('count')
      .where('subject', '=', subject)
      .where('window_start', '=', current)
      .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate())
      .executeTakeFirstOrThrow();
    const before = await trx
      .selectFrom('rate_limit_windows')
      .select('count')
      .where('subject', '=', subject)
      .where('window_start', '=', previous)
      .executeTakeFirst();
    const decision = slidingWindowDecision({
      previous: before ? toInteger(before.count) : 0,
      current: toInteger(locked.count),
      limit,
      windowMs,
      elapsedMs: now - current,
    });
    if (decision.allowed) {
      await trx
        .updateTable('rate_limit_windows')
        .set((eb) => ({ count: eb('count', '+', 1) }))
        .where('subject', '=', subject)
        .where('window_start', '=', current)
        .execute();
    }
    return decision;
  });
}
