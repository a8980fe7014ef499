import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * The storage of the account features: `byok_keys` (the account's own provider keys, sealed),
 * `presets` (named request configuration, JSON text, unique per account), `response_cache` (sealed
 * answers by lookup id, one per account and lookup id, swept by `expires_at`), and the name of the
 * preset a request used on its record. Only new tables and a new nullable column, so nothing is
 * rebuilt; like the earlier migrations, the helpers are this file's own.
 */
export function accountFeaturesMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  const int8 = dialect.int8Type;

  await db.schema
    .createTable('byok_keys')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('provider', 'text', (col) => col.notNull())
    .addColumn('label', 'text')
    .addColumn('allow_fallback', dialect.booleanType, (col) => col.notNull())
    .addColumn('sealed_key', 'text', (col) => col.notNull())
    .addColumn('created_at', int8, (col) => col.notNull())
    // SQLite stores flags in an INTEGER column, so keep them to 0/1; on Postgres this is a no-op check.
    .addCheckConstraint(
      'byok_keys_allow_fallback_flag',
      sql`allow_fallback in (${sql.lit(dialect.bool(false))}, ${sql.lit(dialect.bool(true))})`,
    )
    .execute();
  // Also what the auth lookup's count of an account's keys reads.
  await db.schema.createIndex('byok_keys_account_id_idx').on('byok_keys').column('account_id').execute();

  await db.schema
    .createTable('presets')
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('config', 'text', (col) => col.notNull())
    .addColumn('created_at', int8, (col) => col.notNull())
    .addColumn('updated_at', int8, (col) => col.notNull())
    .addPrimaryKeyConstraint('presets_pk', ['account_id', 'name'])
    .execute();

  await db.schema
    .createTable('response_cache')
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('lookup_id', 'text', (col) => col.notNull())
    .addColumn('sealed_body', 'text', (col) => col.notNull())
    .addColumn('created_at', int8, (col) => col.notNull())
    .addColumn('expires_at', int8, (col) => col.notNull())
    .addPrimaryKeyConstraint('response_cache_pk', ['account_id', 'lookup_id'])
    .execute();
  await db.schema
    .createIndex('response_cache_expires_at_idx')
    .on('response_cache')
    .column('expires_at')
    .execute();

  await db.schema.alterTable('request_records').addColumn('preset', 'text').execute();
}
