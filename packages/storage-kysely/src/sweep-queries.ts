import type { EpochMs } from '@tollgate/core';
import { assertInteger, type QueryContext, write } from './query-context.js';

/**
 * The rate-limit window the sweep assumes: every limit Tollgate applies is per minute. A window row
 * is needed while it is the current or the previous window, so rows starting two windows or more
 * before `now` are dead. A subject limited over a longer window would lose counts to the sweep.
 */
export const SWEPT_RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * `Storage.sweepExpired`, in one write transaction: holds and idempotency claims with
 * `expires_at <= now` (no longer live by the same rule their readers apply), and rate-limit windows
 * that start at or before `now − 2 × 60 000`. Returns how many rows went.
 */
export async function sweepExpired(ctx: QueryContext, now: EpochMs): Promise<number> {
  assertInteger('now', now);
  return write(ctx, async (trx) => {
    const expiredHolds = await trx
      .deleteFrom('credit_reservations')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    const expiredClaims = await trx
      .deleteFrom('idempotency_claims')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    const deadWindows = await trx
      .deleteFrom('rate_limit_windows')
      .where('window_start', '<=', now - 2 * SWEPT_RATE_LIMIT_WINDOW_MS)
      .executeTakeFirst();
    return [expiredHolds, expiredClaims, deadWindows].reduce(
      (total, result) => total + Number(result.numDeletedRows),
      0,
    );
  });
}
