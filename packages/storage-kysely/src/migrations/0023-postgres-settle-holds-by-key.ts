import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * Postgres only: the settle batch finds the holds it deletes (and the accounts and keys it charges)
 * by their keys, never by reading the whole table.
 *
 * `tollgate_settle_batch` deletes its calls' holds with a join of the calls' JSON against
 * `credit_reservations` on the hold's id. Planned on a young holds table (never analyzed, so
 * assumed ten pages small), that join hashed the whole table, a sequential scan, and the plan stayed
 * cached in the session while the table grew: every settle leaves its deleted hold behind until a
 * vacuum, and autovacuum looks at a database about once a minute, so at 1,000 requests a second the
 * scan reads up to ~60,000 dead holds per batch. In a bench database, 576 of ~1,400 settle batches
 * scanned the table (490 pages, 27,000 dead holds, 85 live), and the scan grew with every request
 * until autovacuum's visit; `perf` on a backend put 7 % of its time in the visibility checks of that
 * scan alone. With sequential scans turned off for the function, the delete probes the primary key
 * once per hold, whatever the table's size; the accounts and keys it charges are read by their
 * primary keys too, which is what the planner picks for them anyway once those tables are large.
 * `npm run bench:meter-batch -- --sizes 16 --rounds 3000 --blocks 15` (48,000 requests a schema):
 * the backend's CPU per statement ×0.92 and ×0.93 against the migrated schema's ×1.00 and ×0.97
 * (two pairs). In `bench:ab` (json c=64, a fresh database each round) the table's sequential scans
 * went from 576 to 5 in a round, and the rounds' RPS stayed within their noise (6 rounds: ahead in
 * 4, medians 1,767 → 2,005; another 4: behind in all 4): what it removes is a cost that grows with
 * the time since the last vacuum, not one a short round shows.
 *
 * It changes no result. Like 0017's settings, a later migration that replaces the function must set
 * it again (a replace resets a function's settings).
 */
export function postgresSettleHoldsByKeyMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, SETTLES_WITHOUT_SEQUENTIAL_SCANS);
}

/** Also run again by any later migration that replaces the function. */
export const SETTLES_WITHOUT_SEQUENTIAL_SCANS = [
  'ALTER FUNCTION tollgate_settle_batch(jsonb) SET enable_seqscan = off',
];
