import type { Migration } from 'kysely/migration';

/**
 * Two indexes of the ledger that no query reads any more; every ledger entry wrote both.
 * - `ledger_entries_account_created_idx (account_id, created_at)` (0001) served the monthly
 *   ceiling's sum of the month's charges. Since 0018 that total is a row of its own
 *   (`account_month_charges`).
 * - `ledger_entries_account_request_idx (account_id, request_id)` (0002): no query looks entries up
 *   by account and request. "One charge per request" is the unique partial index on `request_id`,
 *   which stays.
 * The ledger is read by account in insertion order (0009's index), by id (its primary key), and as
 * whole-table sums by checks outside the request path.
 */
export function ledgerUnreadIndexesMigration(): Migration {
  return {
    async up(db) {
      await db.schema.dropIndex('ledger_entries_account_created_idx').execute();
      await db.schema.dropIndex('ledger_entries_account_request_idx').execute();
    },
  };
}
