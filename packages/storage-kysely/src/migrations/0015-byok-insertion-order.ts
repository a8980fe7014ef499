import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * `byok_keys` gets the insertion-order column Postgres tables have (`seq`, see 0001's
 * `insertionOrder`; SQLite has `rowid`), so keys created in the same millisecond list in the order
 * they were created, not by their random ids. Existing rows are numbered in their physical order.
 */
export function byokInsertionOrderMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, [
    'ALTER TABLE byok_keys ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY',
  ]);
}
