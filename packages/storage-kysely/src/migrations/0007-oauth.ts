import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * The storage of OAuth: `oauth_clients` (an account's registered clients; `redirect_uris` is a JSON
 * array as TEXT; only the SHA-256 of the secret) and `oauth_codes` (approved authorization codes,
 * keyed by the SHA-256 of the code, with the key their redemption minted). Only new tables, so
 * nothing is rebuilt.
 */
export function oauthMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  const int8 = dialect.int8Type;

  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('redirect_uris', 'text', (col) => col.notNull())
    .addColumn('secret_hash', 'text', (col) => col.notNull())
    .addColumn('created_at', int8, (col) => col.notNull())
    .execute();
  // The account's list, oldest first.
  await db.schema
    .createIndex('oauth_clients_account_created_idx')
    .on('oauth_clients')
    .columns(['account_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('oauth_codes')
    .addColumn('code_hash', 'text', (col) => col.primaryKey().notNull())
    .addColumn('client_id', 'text', (col) => col.notNull().references('oauth_clients.id'))
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('redirect_uri', 'text', (col) => col.notNull())
    .addColumn('code_challenge', 'text', (col) => col.notNull())
    .addColumn('spend_limit_micros', int8)
    .addColumn('created_at', int8, (col) => col.notNull())
    .addColumn('expires_at', int8, (col) => col.notNull())
    .addColumn('used_at', int8)
    .addColumn('key_id', 'text', (col) => col.references('api_keys.id'))
    .execute();
  // Deleting a client deletes its codes.
  await db.schema.createIndex('oauth_codes_client_id_idx').on('oauth_codes').column('client_id').execute();
  // The sweep.
  await db.schema.createIndex('oauth_codes_expires_at_idx').on('oauth_codes').column('expires_at').execute();
}
