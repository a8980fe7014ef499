import { type CreateTableBuilder, type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;
// biome-ignore lint/suspicious/noExplicitAny: a builder of any table
type TableBuilder = CreateTableBuilder<any, any>;

/** The status values of `RequestStatus` from this migration on: 0002's plus `in_progress`. */
const REQUEST_STATUSES = [
  'success',
  'error',
  'refused',
  'broken_stream',
  'client_closed',
  'replayed',
  'in_progress',
] as const;

/**
 * A request record is written when the request's hold is taken, with status `in_progress`, and
 * completed by its settle; so a process that dies mid-request still leaves the request on record,
 * and the expiry sweep closes it. The status check gains `in_progress`, and a partial index finds
 * the (few) records still in progress.
 *
 * SQLite cannot change a table's CHECK, so the table is rebuilt (create, copy, drop, rename) as 0002
 * did: portable DDL, written once for both databases, with this file's own helpers (a shipped
 * migration never changes, so it shares no code that could).
 */
export function requestInProgressMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  await createRequestRecords(db, dialect, 'request_records_next');
  const columns = sql.join(COLUMNS.map((column) => sql.ref(column)));
  await sql`insert into request_records_next (${columns}) select ${columns} from request_records`.execute(db);
  await db.schema.dropTable('request_records').execute();
  await db.schema.alterTable('request_records_next').renameTo('request_records').execute();
  await db.schema
    .createIndex('request_records_account_created_idx')
    .on('request_records')
    .columns(['account_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('request_records_in_progress_idx')
    .on('request_records')
    .column('created_at')
    .where(sql<boolean>`status = 'in_progress'`)
    .execute();
}

const COLUMNS = [
  'id',
  'account_id',
  'key_id',
  'project_id',
  'endpoint',
  'requested_model',
  'model',
  'provider',
  'status',
  'http_status',
  'error_code',
  'error_message',
  'stream',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'cost_micros',
  'saved_micros',
  'waived',
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

async function createRequestRecords(db: AnyDb, dialect: DialectCapabilities, table: string): Promise<void> {
  const int8 = dialect.int8Type;
  const bool = dialect.booleanType;
  const no = dialect.bool(false);
  // The constraint names are the final table's: Postgres keeps them across the rename, and the
  // old table's constraints of the same names are gone with it before the rename.
  const flag = (column: string) => (builder: TableBuilder) =>
    builder.addCheckConstraint(
      `request_records_${column}_flag_v3`,
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
    .addPrimaryKeyConstraint('request_records_pk_v3', ['id'])
    .addCheckConstraint(
      'request_records_status_v3',
      sql`status in (${sql.join(REQUEST_STATUSES.map((status) => sql.lit(status)))})`,
    )
    .$call(flag('stream'))
    .$call(flag('byok'))
    .$call(flag('cache_hit'))
    .execute();
}
