import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

/**
 * A migration of SQL statements run, in order, only where the dialect implements the hot path
 * natively (`nativeReserveAndSettle`: Postgres); a no-op elsewhere (SQLite), which still records it
 * as applied.
 */
export function postgresOnlyMigration(
  dialect: DialectCapabilities,
  statements: readonly string[],
): Migration {
  return {
    async up(db) {
      if (!dialect.nativeReserveAndSettle) return;
      for (const statement of statements) await sql.raw(statement).execute(db);
    },
  };
}
