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
  return statementsWhere(dialect.nativeReserveAndSettle, statements);
}

/**
 * The other side of {@link postgresOnlyMigration}: statements run only where the hot path runs as
 * kysely transactions in commit groups (SQLite); a no-op on Postgres, which still records it.
 */
export function sqliteOnlyMigration(dialect: DialectCapabilities, statements: readonly string[]): Migration {
  return statementsWhere(!dialect.nativeReserveAndSettle, statements);
}

function statementsWhere(applies: boolean, statements: readonly string[]): Migration {
  return {
    async up(db) {
      if (!applies) return;
      for (const statement of statements) await sql.raw(statement).execute(db);
    },
  };
}
