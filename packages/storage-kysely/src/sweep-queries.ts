import type { EpochMs } from '@tollgate/core';
import { sql } from 'kysely';
import { assertInteger, type QueryContext, write } from './query-context.js';

/**
 * The rate-limit window the sweep assumes: every limit Tollgate applies is per minute. A window row
 * is needed while it is the current or the previous window, so rows starting two windows or more
 * before `now` are dead. A subject limited over a longer window would lose counts to the sweep.
 */
export const SWEPT_RATE_LIMIT_WINDOW_MS = 60_000;

/** What the record of a request cut off by a dead process says. Nothing was charged for it. */
export const CUT_OFF_MESSAGE =
  'The gateway stopped before this request finished (its credit hold expired unsettled). Nothing was charged.';

/**
 * `Storage.sweepExpired`, in one write transaction: holds, idempotency claims, cached responses and
 * OAuth codes (used or not) with `expires_at <= now` (no longer live by the same rule their readers apply), and rate-limit windows
 * that start at or before `now − 2 × 60 000`. Returns how many rows went. First, every
 * `in_progress` record no live hold covers is closed as an `internal_error` (see `Storage`).
 */
export async function sweepExpired(ctx: QueryContext, now: EpochMs): Promise<number> {
  assertInteger('now', now);
  return write(ctx, async (trx) => {
    // Before the holds go: a request still in progress with no live hold lost its process.
    await trx
      .updateTable('request_records')
      .set({
        status: 'error',
        http_status: 500,
        error_code: 'internal_error',
        error_message: CUT_OFF_MESSAGE,
      })
      // A literal, not a parameter: only then can either database use the partial index on
      // in-progress records instead of scanning every record on each sweep.
      .where(sql<boolean>`status = 'in_progress'`)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('credit_reservations as r')
              .select('r.id')
              .whereRef('r.request_id', '=', 'request_records.id')
              .where('r.expires_at', '>', now),
          ),
        ),
      )
      .execute();
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
    const expiredCache = await trx
      .deleteFrom('response_cache')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    const expiredCodes = await trx
      .deleteFrom('oauth_codes')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return [expiredHolds, expiredClaims, deadWindows, expiredCache, expiredCodes].reduce(
      (total, result) => total + Number(result.numDeletedRows),
      0,
    );
  });
}
