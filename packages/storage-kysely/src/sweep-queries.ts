import type { EpochMs } from '@tollgate/core';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
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
 * What the record of a request whose settle failed says when even the failure could not be
 * written, so that releasing its hold closed it. Nothing was charged for it.
 */
export const UNSETTLED_MESSAGE =
  'The gateway could not settle this request (its credit hold was released unsettled). Nothing was charged.';

/**
 * `Storage.sweepExpired`, in one write transaction: holds, idempotency claims, cached responses and
 * OAuth codes (used or not) with `expires_at <= now` (no longer live by the same rule their readers apply), and rate-limit windows
 * that start at or before `now − 2 × 60 000`. Returns how many rows went. First, the `in_progress`
 * record of every expired hold is closed as an `internal_error`, unless a live hold (a later
 * reserve of the same request) covers it. The records are found through the holds: a hold leaves
 * storage only with its record closed (the settle, `releaseReservation`, this sweep), and the
 * records need no index on their status, which would make every settle's update of a record
 * touch all of its indexes (Postgres: no HOT update).
 */
export async function sweepExpired(ctx: QueryContext, now: EpochMs): Promise<number> {
  assertInteger('now', now);
  return write(ctx, async (trx) => {
    // Before the holds go: a request still in progress whose hold expired lost its process.
    await closeUncoveredRecords(trx, CUT_OFF_MESSAGE, now)
      .where('id', 'in', (eb) =>
        eb.selectFrom('credit_reservations').select('request_id').where('expires_at', '<=', now),
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

/**
 * Closes `in_progress` records (the caller narrows which) that no hold covers (none live at
 * `liveAt`, or none at all when it is `null`) as uncharged `internal_error`s with `message`; the
 * settle's own record, had it landed, would have replaced them.
 */
export function closeUncoveredRecords(trx: Kysely<Database>, message: string, liveAt: EpochMs | null) {
  return trx
    .updateTable('request_records')
    .set({ status: 'error', http_status: 500, error_code: 'internal_error', error_message: message })
    .where('status', '=', 'in_progress')
    .where(({ not, exists, selectFrom }) => {
      const holds = selectFrom('credit_reservations as r')
        .select('r.id')
        .whereRef('r.request_id', '=', 'request_records.id');
      return not(exists(liveAt === null ? holds : holds.where('r.expires_at', '>', liveAt)));
    });
}
