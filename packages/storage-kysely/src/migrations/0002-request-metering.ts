import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: a builder of any table
type TableBuilder = CreateTableBuilder<any, any>;

/** The status values of `RequestStatus`; a new one needs a migration that widens the check. */
const REQUEST_STATUSES = [
  'success',
  'error',
  'refused',
  'broken_stream',
  'client_closed',
  'replayed',
] as const;

/** Columns that 0001 and 0002 share, copied over as they are. */
const KEPT_COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'project_id',
  'requested_model',
  'model',
  'provider',
  'status',
  'http_status',
  'error_code',
  'error_message',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_micros',
  'saved_micros',
  'byok',
  'cache_hit',
  'ttft_ms',
  'duration_ms',
  'finish_reason',
  'attempts',
  'routing_failures',
  'attachments',
  'guardrails',
  'metadata',
  'created_at',
] as const;

/**
 * Metering: `request_records` gets the shape of `RequestRecord` (`endpoint`, `stream`, and `waived`
 * as the waiver's reason rather than a flag), and the ledger gets an index per request plus a
 * partial unique index that makes a second `charge` entry for one request id impossible in the
 * database itself, whatever code path tries.
 *
 * `waived` changes type and SQLite can neither change a column's type nor drop one that a table
 * CHECK names, so the table is rebuilt (create, copy, drop, rename): portable DDL, written once for
 * both databases. Nothing wrote request records before this migration; a row that had `waived` set
 * would carry the reason `unknown`. Like 0001, the helpers are this file's own: a migration never
 * changes once shipped, so it shares no code that could.
 */
export function requestMeteringMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  await createRequestRecords(db, dialect, 'request_records_next');
  const kept = sql.join(KEPT_COLUMNS.map((column) => sql.ref(column)));
  await sql`insert into request_records_next (${kept}, endpoint, stream, waived)
    select ${kept}, ${sql.lit('chat.completions')}, ${sql.lit(dialect.bool(false))},
           case when waived = ${sql.lit(dialect.bool(true))} then ${sql.lit('unknown')} end
      from request_records`.execute(db);
  await db.schema.dropTable('request_records').execute();
  await db.schema.alterTable('request_records_next').renameTo('request_records').execute();
  await db.schema
    .createIndex('request_records_account_created_idx')
    .on('request_records')
    .columns(['account_id', 'created_at'])
    .execute();

  await db.schema
    .createIndex('ledger_entries_account_request_idx')
    .on('ledger_entries')
    .columns(['account_id', 'request_id'])
    .execute();
  await db.schema
    .createIndex('ledger_entries_one_charge_per_request')
    .unique()
    .on('ledger_entries')
    .column('request_id')
    .where(sql<boolean>`kind = 'charge' and request_id is not null`)
    .execute();
}

async function createRequestRecords(db: AnyDb, dialect: DialectCapabilities, table: string): Promise<void> {
  const int8 = dialect.int8Type;
  const bool = dialect.booleanType;
  const no = dialect.bool(false);
  // The constraint names are the final table's: Postgres keeps them across the rename.
  const flag = (column: string) => (builder: TableBuilder) =>
    builder.addCheckConstraint(
      `request_records_${column}_flag`,
      sql`${sql.ref(column)} in (${sql.lit(dialect.bool(false))}, ${sql.lit(dialect.bool(true))})`,
    );
  await db.schema
    .createTable(table)
    .addColumn('id', 'text', (col) => col.notNull())
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('key_id', 'text')
    .addColumn('project_id', 'text')
    .addColumn('endpoint', 'text', (col) => col.notNull().defaultTo('chat.completions'))
    .addColumn('requested_model', 'text')
    .addColumn('model', 'text')
    .addColumn('provider', 'text')
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('http_status', 'integer', (col) => col.notNull())
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('stream', bool, (col) => col.notNull().defaultTo(no))
    .addColumn('prompt_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('completion_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cached_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cost_micros', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('saved_micros', int8, (col) => col.notNull().defaultTo(0))
    .addColumn('waived', 'text')
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
    // Named, unlike 0001's column-level key: Postgres would name it after the temporary table.
    .addPrimaryKeyConstraint('request_records_pk', ['id'])
    .addCheckConstraint(
      'request_records_status',
      sql`status in (${sql.join(REQUEST_STATUSES.map((status) => sql.lit(status)))})`,
    )
    .$call(flag('stream'))
    .$call(flag('byok'))
    .$call(flag('cache_hit'))
    .execute();
}
