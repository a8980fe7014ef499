import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * Windows on key limits. `api_keys.limit_reset` (`daily`, `weekly`, `monthly`, `NULL` for the
 * lifetime) says which calendar window (UTC) the key's cap applies to. `key_day_spend` keeps what
 * each key was charged per UTC day, a charge counted in the day its hold was taken: a day, week or
 * month's spend is the sum of its days, read under the account's lock by the reserve, so a window
 * starts afresh at its boundary without a reset job to race with the requests around it. Charges
 * before this migration have no day (the keys' lifetime spend still has them). Written by the settle
 * (storage-kysely's `settle-queries.ts`, Postgres's `settle-request.sql` and `settle-batch.sql`).
 */
export function keyLimitWindowsMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .addColumn('limit_reset', 'text', (col) => col.check(sql`limit_reset in ('daily', 'weekly', 'monthly')`))
    .execute();
  await db.schema
    .createTable('key_day_spend')
    .addColumn('key_id', 'text', (col) => col.notNull())
    .addColumn('day_start', dialect.int8Type, (col) => col.notNull())
    .addColumn('spent_micros', dialect.int8Type, (col) => col.notNull())
    .addPrimaryKeyConstraint('key_day_spend_pkey', ['key_id', 'day_start'])
    .execute();
}
