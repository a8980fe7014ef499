import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * The request record's second write (its settle) becomes an update Postgres can keep on the
 * record's own page (a HOT update), with no new entry in any of the table's indexes.
 *
 * The reserve writes a request's record `in_progress` and the settle rewrites it. Postgres makes
 * an update HOT only when no indexed column changes and the page has room. `status` was in the
 * predicate of 0003's partial index on the records in progress, so every settle inserted a new
 * entry in every index of the table: in a bench database, 0 of 7,293 settles were HOT. That index
 * served one reader, the expiry sweep, which now finds the records of dead requests through their
 * expired holds (`sweepExpired`), while `releaseReservation` closes the record of a hold it
 * releases; so a record no hold covers is closed whichever way its hold went.
 *
 * 1. Records `in_progress` with no hold at all are closed now (the sweep of 0003 would have closed
 *    them by the index; the new one finds records through holds only): their settle failed and the
 *    failure could not be written.
 * 2. The partial index goes (both databases; on SQLite it was two more writes per request).
 * 3. Postgres: the records' table leaves 30 % of each page free (`fillfactor = 70`) for the settle's
 *    update, so it can stay on the page. Only pages written from now on; nothing is rewritten.
 */
export function recordsClosedThroughHoldsMigration(dialect: DialectCapabilities): Migration {
  return {
    async up(db) {
      await sql`
        UPDATE request_records
        SET status = 'error', http_status = 500, error_code = 'internal_error',
          error_message = ${'The gateway could not settle this request (its credit hold was released unsettled). Nothing was charged.'}
        WHERE status = 'in_progress'
          AND NOT EXISTS (SELECT 1 FROM credit_reservations r WHERE r.request_id = request_records.id)`.execute(
        db,
      );
      await db.schema.dropIndex('request_records_in_progress_idx').execute();
      await postgresOnlyMigration(dialect, ['ALTER TABLE request_records SET (fillfactor = 70)']).up(db);
    },
  };
}
