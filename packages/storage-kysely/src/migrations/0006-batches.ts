import { type Kysely, sql } from 'kysely';
import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';

// biome-ignore lint/suspicious/noExplicitAny: migrations run on the schema as it was, not the typed one
type AnyDb = Kysely<any>;

/**
 * The storage of batches: `batches` (one row per batch, with its counts; `metadata` is a JSON
 * object as TEXT or NULL) and `batch_items` (one row per item, keyed by its batch and index, with
 * the lease of the worker running it). Only new tables, so nothing is rebuilt.
 *
 * The item indexes are partial, on the states the hot queries ask for, so they stay small however
 * many items have finished: the claim walks the `in_progress` batches oldest first and reads their
 * queued items in index order, and running items by lease expiry; "does the batch still have
 * queued or running items" reads the queued index and the running-by-batch one; a batch's finished
 * items are read in index order through the primary key. The queries must name the state as a
 * literal (not a bound parameter) for either database to pick a partial index.
 */
export function batchesMigration(dialect: DialectCapabilities): Migration {
  return { up: (db) => migrateUp(db, dialect) };
}

async function migrateUp(db: AnyDb, dialect: DialectCapabilities): Promise<void> {
  const int8 = dialect.int8Type;

  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (col) => col.primaryKey().notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('api_key_id', 'text', (col) => col.notNull().references('api_keys.id'))
    .addColumn('endpoint', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull())
    .addColumn('total', 'integer', (col) => col.notNull())
    .addColumn('completed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('failed', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('metadata', 'text')
    .addColumn('created_at', int8, (col) => col.notNull())
    .addColumn('in_progress_at', int8)
    .addColumn('completed_at', int8)
    .addColumn('cancelled_at', int8)
    .execute();
  // The account's list, newest first, and the position of its `after` cursor.
  await db.schema
    .createIndex('batches_account_created_idx')
    .on('batches')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
  // The claim's walk through the batches with work to hand out, oldest first.
  await db.schema
    .createIndex('batches_in_progress_idx')
    .on('batches')
    .columns(['created_at', 'id'])
    .where(sql<boolean>`status = 'in_progress'`)
    .execute();

  await db.schema
    .createTable('batch_items')
    .addColumn('batch_id', 'text', (col) => col.notNull().references('batches.id'))
    .addColumn('idx', 'integer', (col) => col.notNull())
    .addColumn('custom_id', 'text', (col) => col.notNull())
    .addColumn('request_id', 'text', (col) => col.notNull())
    .addColumn('sealed_body', 'text', (col) => col.notNull())
    .addColumn('state', 'text', (col) => col.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', int8)
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('sealed_result', 'text')
    .addColumn('finished_at', int8)
    // Also what pages through a batch's finished items in index order.
    .addPrimaryKeyConstraint('batch_items_pk', ['batch_id', 'idx'])
    .execute();
  await db.schema
    .createIndex('batch_items_queued_idx')
    .on('batch_items')
    .columns(['batch_id', 'idx'])
    .where(sql<boolean>`state = 'queued'`)
    .execute();
  await db.schema
    .createIndex('batch_items_running_lease_idx')
    .on('batch_items')
    .column('lease_until')
    .where(sql<boolean>`state = 'running'`)
    .execute();
  await db.schema
    .createIndex('batch_items_running_batch_idx')
    .on('batch_items')
    .column('batch_id')
    .where(sql<boolean>`state = 'running'`)
    .execute();
}
