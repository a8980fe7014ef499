import type { RequestRecord } from '@tollgate/core';
import type { Kysely } from 'kysely';
import type { Database } from './database.js';
import { prepareQuery, valuesOf } from './prepared-query.js';
import { type QueryContext, write } from './query-context.js';
import { mapRequestRecord, RECORD_COLUMNS, type RecordRow, requestRecordRow } from './row-mappers.js';

/**
 * `Storage.insertRequestRecord`: writes the record, over the request's `in_progress` record if there
 * is one; an id already taken by a finished record is rejected.
 */
export async function insertRequestRecord(ctx: QueryContext, record: RequestRecord): Promise<void> {
  const row = requestRecordRow(record, ctx.dialect);
  await write(ctx, (trx) => writeRecord(ctx, row, trx));
}

/**
 * Writes one record row inside a write transaction: a new row, or over the same request's
 * `in_progress` record (written with its hold). Throws when a finished record already holds the id,
 * so a request is settled — and charged — at most once.
 */
export async function writeRecord(ctx: QueryContext, row: RecordRow, trx: Kysely<Database>): Promise<void> {
  if (!(await upsertRecord.first(ctx, row, trx))) {
    throw new Error(`request ${row.id} already has a finished record`);
  }
}

/** Columns a finished record writes over its `in_progress` one: all but the id and the owner. */
const REWRITTEN_COLUMNS = RECORD_COLUMNS.filter((column) => column !== 'id' && column !== 'account_id');

/** Inserts a record, or rewrites the same request's `in_progress` record; returns the id if it did either. */
const upsertRecord = prepareQuery((db, row: RecordRow) =>
  db
    .insertInto('request_records')
    .values(valuesOf(row, RECORD_COLUMNS))
    .onConflict((oc) =>
      oc
        .column('id')
        .doUpdateSet((eb) =>
          Object.fromEntries(REWRITTEN_COLUMNS.map((column) => [column, eb.ref(`excluded.${column}`)])),
        )
        .where('request_records.status', '=', 'in_progress')
        .whereRef('request_records.account_id', '=', 'excluded.account_id'),
    )
    .returning('id'),
);

/** `Storage.getRequestRecord`: scoped to the account, so another account's request id reads as null. */
export async function getRequestRecord(
  ctx: QueryContext,
  accountId: string,
  requestId: string,
): Promise<RequestRecord | null> {
  const row = await ctx.db
    .selectFrom('request_records')
    .selectAll()
    .where('id', '=', requestId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? mapRequestRecord(row) : null;
}
