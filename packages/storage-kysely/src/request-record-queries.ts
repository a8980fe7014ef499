import type { RequestRecord } from '@tollgate/core';
import { prepareQuery, valuesOf } from './prepared-query.js';
import { type QueryContext, write } from './query-context.js';
import { mapRequestRecord, RECORD_COLUMNS, type RecordRow, requestRecordRow } from './row-mappers.js';

/** `Storage.insertRequestRecord`: one insert; a record id already taken is rejected (primary key). */
export async function insertRequestRecord(ctx: QueryContext, record: RequestRecord): Promise<void> {
  const row = requestRecordRow(record, ctx.dialect);
  await write(ctx, (trx) => insertRecord.run(ctx, row, trx));
}

/** Inserts one request record row (every column given). */
export const insertRecord = prepareQuery((db, row: RecordRow) =>
  db.insertInto('request_records').values(valuesOf(row, RECORD_COLUMNS)),
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
