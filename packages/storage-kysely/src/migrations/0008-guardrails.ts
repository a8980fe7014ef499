import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * The storage of guardrails: `guardrails` (an account's rules; `pattern` only for `regex` and
 * `keyword`). Only a new table: `request_records.guardrails` (the JSON verdict) exists since 0001.
 */
export function guardrailsMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  await db.schema
    .createTable('guardrails')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('stage', 'text', (col) => col.notNull())
    .addColumn('category', 'text', (col) => col.notNull())
    .addColumn('pattern', 'text')
    .addColumn('created_at', dialect.int8Type, (col) => col.notNull())
    .execute();
  // The account's list, oldest first; and the auth query's count.
  await db.schema
    .createIndex('guardrails_account_created_idx')
    .on('guardrails')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
}
