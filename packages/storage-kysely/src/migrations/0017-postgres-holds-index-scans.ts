import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * Postgres only: the reserve functions sum an account's live holds without bitmap scans.
 *
 * Each metered request inserts a hold and deletes it at its settle. The deleted row stays in the
 * holds table and in its indexes until the next vacuum. Autovacuum looks at a database once a
 * minute, so at 1,000 requests a second up to ~60,000 dead holds can pile up.
 *
 * The reserve sums the holds with `account_id = $1 AND expires_at > now`. A hold lives 15
 * minutes, so that range also covers every dead hold of the account. The planner chose a bitmap
 * scan for it. A bitmap scan checks every dead entry against the table on every call, and it never
 * marks an entry dead in the index. So each reserve batch got slower as dead holds piled up:
 * 1,138 table visits for no live hold in a bench database.
 *
 * An index-only scan (the index of 0013 covers the key and the amount) visits the table for a dead
 * entry once, then marks the entry dead in the index (`kill_prior_tuple`). Later scans skip it
 * without visiting the table. In that database the next scan made 0 table visits, and took
 * 0.10 ms instead of 0.41–0.63 ms with bitmaps. The key's sum gets the same index, filtered by
 * key, instead of a bitmap AND with the `key_id` index.
 *
 * Turning bitmap scans off for the two functions that read holds steers the planner there. It
 * changes no result. The ledger's month sum in the same functions uses its
 * `(account_id, created_at)` index either way.
 */
export function postgresHoldsIndexScansMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, RESERVES_WITHOUT_BITMAP_SCANS);
}

/** Also run again by any later migration that replaces these functions (a replace resets them). */
export const RESERVES_WITHOUT_BITMAP_SCANS = [
  'ALTER FUNCTION tollgate_reserve_batch(jsonb) SET enable_bitmapscan = off',
  `ALTER FUNCTION tollgate_reserve_credit(text, text, bigint, bigint, bigint, bigint, text, text, bigint, jsonb)
    SET enable_bitmapscan = off`,
];
