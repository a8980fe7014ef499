import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

/**
 * `request_records.overrun_micros`: what usage an upstream reported beyond the request's hold would
 * have cost, and was not charged (a charge never exceeds its hold). 0 for every request whose charge
 * fit, which is every request so far. Postgres's `tollgate_write_record` and `tollgate_settle_batch`
 * name it in their SET lists (storage-postgres/sql/functions/).
 */
export function requestOverrunMigration(dialect: DialectCapabilities): Migration {
  return {
    // biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
    up: async (db: Kysely<any>) => {
      await db.schema
        .alterTable('request_records')
        .addColumn('overrun_micros', dialect.int8Type, (col) => col.notNull().defaultTo(0))
        .execute();
    },
  };
}
