import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * `health_probe`: at most one row (id 1), which `Storage.probeWrite` upserts so that `/healthz`
 * answers whether the database can commit a write, not only whether it answers a read. Holds no
 * data but the time of the last probe.
 */
export function healthProbeMigration(dialect: DialectCapabilities): Migration {
  return {
    up: async (db: AnyDb) => {
      await db.schema
        .createTable('health_probe')
        .addColumn('id', 'integer', (col) => col.primaryKey().notNull())
        .addColumn('probed_at', dialect.int8Type, (col) => col.notNull())
        .execute();
    },
  };
}
