import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * Indexes for the keyset pages of the CSV export and the ledger API (`records-export-queries.ts`):
 * - `request_records (account_id, created_at, id)`: the export pages newest first by
 *   `(created_at, id)`; with `id` in the index, neither the cursor nor the ORDER BY needs a sort.
 *   It replaces `(account_id, created_at)`, its prefix, which serves nothing it does not.
 * - `ledger_entries` by account and insertion order: Postgres `(account_id, seq)`; SQLite
 *   `(account_id)`, since every SQLite index ends with the `rowid`, so that one is
 *   `(account_id, rowid)` already.
 * Indexes only: no table is rebuilt, no row is touched.
 */
export function recordsExportMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  await db.schema
    .createIndex('request_records_account_created_id_idx')
    .on('request_records')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
  await db.schema.dropIndex('request_records_account_created_idx').ifExists().execute();
  await db.schema
    .createIndex('ledger_entries_account_order_idx')
    .on('ledger_entries')
    .columns(dialect.insertionOrderColumn === 'seq' ? ['account_id', 'seq'] : ['account_id'])
    .execute();
}
