import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * `api_keys` learns three things. `revoked`: a key revoked for good, which `disabled: false` can
 * no longer enable (`disabled` stays the one flag authentication reads). `expires_at`: when
 * authentication starts refusing the key (client-credentials tokens), `NULL` for never.
 * `oauth_client_id`: the OAuth client the key was minted for, so deleting the client revokes its
 * keys; no foreign key, since the client row goes while its revoked keys stay. Keys a code minted
 * before this migration are linked through their code; earlier client-credentials keys cannot be
 * told apart from others and stay unlinked. The partial index serves `client_credentials` looking
 * for a key to hand out again, and the client's deletion.
 */
export function keysRevokedAndExpiringMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  const no = dialect.bool(false);
  await db.schema
    .alterTable('api_keys')
    .addColumn('revoked', dialect.booleanType, (col) =>
      col
        .notNull()
        .defaultTo(no)
        .check(sql`revoked in (${sql.lit(no)}, ${sql.lit(dialect.bool(true))})`),
    )
    .execute();
  await db.schema.alterTable('api_keys').addColumn('expires_at', dialect.int8Type).execute();
  await db.schema.alterTable('api_keys').addColumn('oauth_client_id', 'text').execute();
  await sql`UPDATE api_keys SET oauth_client_id =
    (SELECT c.client_id FROM oauth_codes c WHERE c.key_id = api_keys.id)
    WHERE id IN (SELECT key_id FROM oauth_codes WHERE key_id IS NOT NULL)`.execute(db);
  await db.schema
    .createIndex('api_keys_oauth_client_idx')
    .on('api_keys')
    .columns(['oauth_client_id', 'expires_at'])
    .where(sql.ref('oauth_client_id'), 'is not', null)
    .execute();
}
