import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// Migrations receive an untyped Kysely: the typed `Database` describes the latest schema, not the
// one a migration starts from.
// biome-ignore lint/suspicious/noExplicitAny: see above
type AnyDb = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: a builder of any table
type TableBuilder = CreateTableBuilder<any, any>;

/**
 * The first schema: every table, written once for both databases. Only column types and the
 * append-only triggers differ, and those come from the dialect. No `down`: the ledger is
 * append-only, so there is no migration that drops it.
 */
export function initialMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => createInitialSchema(db, dialect) };
}

async function createInitialSchema(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  const int8 = dialect.int8Type;
  const bool = dialect.booleanType;
  const no = dialect.bool(false);
  // SQLite stores flags in an INTEGER column, so keep them to 0/1; on Postgres this is a no-op check.
  const flag = (table: string, column: string) => (builder: TableBuilder) =>
    builder.addCheckConstraint(
      `${table}_${column}_flag`,
      sql`${sql.ref(column)} in (${sql.lit(dialect.bool(false))}, ${sql.lit(dialect.bool(true))})`,
    );
  const insertionOrder = (builder: TableBuilder) =>
    dialect.insertionOrderColumn === 'seq'
      ? builder.addColumn('seq', 'bigint', (col) => col.generatedAlwaysAsIdentity())
      : builder;
  const oneOf = (column: string, values: readonly string[]) =>
    sql`${sql.ref(column)} in (${sql.join(values.map((value) => sql.lit(value)))})`;

  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('balance_micros', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('monthly_limit_micros', int8)
    .addColumn('default_rpm', 'integer')
    .addColumn('suspended', bool, (col) => col.notNull().defaultTo(no))
    .addColumn('created_at', int8, (col) => col.notNull())
    .$call(flag('accounts', 'suspended'))
    .execute();

  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('created_at', int8, (col) => col.notNull())
    // Target of api_keys' (project_id, account_id) foreign key: a key's project must be its account's.
    .addUniqueConstraint('projects_id_account_id_unique', ['id', 'account_id'])
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('project_id', 'text')
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('scope', 'text', (col) => col.notNull())
    .addColumn('env', 'text', (col) => col.notNull())
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('prefix', 'text', (col) => col.notNull())
    .addColumn('spend_limit_micros', int8)
    .addColumn('rate_limit_rpm', 'integer')
    .addColumn('spent_micros', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('disabled', bool, (col) => col.notNull().defaultTo(no))
    .addColumn('created_at', int8, (col) => col.notNull())
    .addForeignKeyConstraint('api_keys_project_of_account', ['project_id', 'account_id'], 'projects', [
      'id',
      'account_id',
    ])
    .addCheckConstraint('api_keys_scope', oneOf('scope', ['inference', 'provisioning']))
    .addCheckConstraint('api_keys_env', oneOf('env', ['live', 'test']))
    .$call(flag('api_keys', 'disabled'))
    .$call(insertionOrder)
    .execute();
  await db.schema.createIndex('api_keys_account_id_idx').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('amount_micros', int8, (col) => col.notNull())
    .addColumn('balance_after_micros', int8, (col) => col.notNull())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('description', 'text', (col) => col.notNull())
    .addColumn('request_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('created_at', int8, (col) => col.notNull())
    .addCheckConstraint('ledger_entries_amount_nonzero', sql`amount_micros <> 0`)
    .addCheckConstraint('ledger_entries_kind', oneOf('kind', ['credit', 'fee', 'charge', 'adjustment']))
    .$call(insertionOrder)
    .execute();
  await db.schema
    .createIndex('ledger_entries_account_created_idx')
    .on('ledger_entries')
    .columns(['account_id', 'created_at'])
    .execute();
  for (const statement of dialect.appendOnlyLedgerSql) await sql.raw(statement).execute(db);

  await db.schema
    .createTable('request_records')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('key_id', 'text')
    .addColumn('project_id', 'text')
    .addColumn('requested_model', 'text')
    .addColumn('model', 'text')
    .addColumn('provider', 'text')
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('http_status', 'integer', (col) => col.notNull())
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('prompt_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cached_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cost_micros', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('saved_micros', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('waived', bool)
    .addColumn('byok', bool, (col) => col.notNull().defaultTo(no))
    .addColumn('cache_hit', bool, (col) => col.notNull().defaultTo(no))
    .addColumn('ttft_ms', 'integer')
    .addColumn('duration_ms', 'integer')
    .addColumn('finish_reason', 'text')
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('routing_failures', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('attachments', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('guardrails', 'text', (col) => col.notNull().defaultTo('[]'))
    .addColumn('metadata', 'text', (col) => col.notNull().defaultTo('{}'))
    .addColumn('created_at', int8, (col) => col.notNull())
    .$call(flag('request_records', 'waived'))
    .$call(flag('request_records', 'byok'))
    .$call(flag('request_records', 'cache_hit'))
    .execute();
  await db.schema
    .createIndex('request_records_account_created_idx')
    .on('request_records')
    .columns(['account_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('credit_reservations')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('key_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('amount_micros', int8, (col) => col.notNull())
    .addColumn('created_at', int8, (col) => col.notNull())
    .addColumn('expires_at', int8, (col) => col.notNull())
    .execute();
  for (const column of ['account_id', 'key_id', 'expires_at']) {
    await db.schema
      .createIndex(`credit_reservations_${column}_idx`)
      .on('credit_reservations')
      .column(column)
      .execute();
  }

  await db.schema
    .createTable('idempotency_claims')
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('idem_key', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('request_id', 'text', (col) => col.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', int8, (col) => col.notNull())
    .addColumn('expires_at', int8, (col) => col.notNull())
    .addPrimaryKeyConstraint('idempotency_claims_pk', ['account_id', 'idem_key'])
    .addCheckConstraint('idempotency_claims_state', oneOf('state', ['in_flight', 'completed']))
    .execute();

  await db.schema
    .createTable('rate_limit_windows')
    .addColumn('subject', 'text', (col) => col.notNull())
    .addColumn('window_start', int8, (col) => col.notNull())
    .addColumn('count', 'integer', (col) => col.notNull())
    .addPrimaryKeyConstraint('rate_limit_windows_pk', ['subject', 'window_start'])
    .execute();
}
