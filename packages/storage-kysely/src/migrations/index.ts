import type { Kysely } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { initialMigration } from './0001-initial.js';
import { requestMeteringMigration } from './0002-request-metering.js';

/**
 * Tollgate's versioned migrations, in code (no migration folder to ship or find at run time).
 * Names sort in the order they run and are recorded in `kysely_migration`: never rename one.
 */
export function tollgateMigrations(dialect: DialectCapabilities): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '0001_initial': initialMigration(dialect),
    '0002_request_metering': requestMeteringMigration(dialect),
  };
  return { getMigrations: async () => migrations };
}

/**
 * Brings the database up to the latest migration, or throws. kysely's `Migrator` holds its lock
 * while it runs (a Postgres advisory lock; for SQLite, pass a transaction begun with the write
 * lock), so processes starting together run each migration once. `migrationTableSchema` pins
 * kysely's bookkeeping tables to one Postgres schema: without it kysely would see another schema's
 * `kysely_migration` and skip creating ours.
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
  db: Kysely<any>,
  dialect: DialectCapabilities,
  options: { migrationTableSchema?: string } = {},
): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: tollgateMigrations(dialect),
    ...(options.migrationTableSchema ? { migrationTableSchema: options.migrationTableSchema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'set-up';
    throw new Error(`${dialect.name} migration ${failed} failed: ${String(error)}`, { cause: error });
  }
}
