import type {
  EpochMs,
  LedgerEntry,
  LedgerPage,
  RecordCursor,
  RequestRecord,
  RequestRecordFilter,
} from '@tollgate/core';
import { sql } from 'kysely';
import { assertInteger, type QueryContext } from './query-context.js';
import { mapLedgerEntry, mapRequestRecord } from './row-mappers.js';

/**
 * `Storage.listRequestRecordsPage`: a keyset page, newest first. The row-value comparison
 * `(created_at, id) < (?, ?)` and the ORDER BY are both served by `(account_id, created_at, id)`
 * (`request_records_account_created_id_idx`), so a page costs the same wherever it starts and nothing is sorted in memory.
 * The filter's conditions only drop rows from that index range; they never change the order.
 */
export async function listRequestRecordsPage(
  ctx: QueryContext,
  accountId: string,
  options: { since: EpochMs; limit: number; before?: RecordCursor; filter?: RequestRecordFilter },
): Promise<RequestRecord[]> {
  assertInteger('since', options.since);
  assertLimit(options.limit);
  const { before, filter = {} } = options;
  if (before) assertInteger('before.createdAt', before.createdAt);
  const { model, status, keyId, label } = filter;
  const rows = await ctx.db
    .selectFrom('request_records')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('created_at', '>=', options.since)
    .$if(before !== undefined, (qb) =>
      qb.where(sql<boolean>`(created_at, id) < (${before!.createdAt}, ${before!.id})`),
    )
    .$if(model !== undefined, (qb) =>
      qb.where((eb) => eb.or([eb('model', '=', model!), eb('requested_model', '=', model!)])),
    )
    .$if(status !== undefined, (qb) => qb.where('status', '=', status!))
    .$if(keyId !== undefined, (qb) => qb.where('key_id', '=', keyId!))
    .$if(label !== undefined, (qb) => qb.where(metadataHasPair(ctx, label!)))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit)
    .execute();
  return rows.map(mapRequestRecord);
}

/**
 * `Storage.listLedgerPage`: newest first by the insertion order (`rowid` / `seq`), which is the
 * balance chain's order, reading `limit + 1` rows to tell whether more follow. Each entry carries
 * the balance stored with it when it was appended (`balance_after_micros`), so nothing is summed.
 * The cursor's position is read first: the ledger is append-only, so it never moves. Served by
 * the index on the account and the insertion order (`ledger_entries_account_order_idx`).
 */
export async function listLedgerPage(
  ctx: QueryContext,
  accountId: string,
  options: { limit: number; after?: string },
): Promise<LedgerPage<LedgerEntry> | null> {
  assertLimit(options.limit);
  const order = sql.ref(ctx.dialect.insertionOrderColumn);
  let position: unknown;
  if (options.after !== undefined) {
    const cursor = await ctx.db
      .selectFrom('ledger_entries')
      .select(order.as('position'))
      .where('id', '=', options.after)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (!cursor) return null;
    position = (cursor as { position: unknown }).position;
  }
  const rows = await ctx.db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .$if(position !== undefined, (qb) => qb.where(sql<boolean>`${order} < ${position}`))
    .orderBy(order, 'desc')
    .limit(options.limit + 1)
    .execute();
  return { entries: rows.slice(0, options.limit).map(mapLedgerEntry), hasMore: rows.length > options.limit };
}

/**
 * `metadata` holds `JSON.stringify` of a flat string-to-string object, so the pair is in it exactly
 * when `"name":"value"` (each JSON-encoded, as the adapter wrote them) is a substring: the needle's
 * quotes are unescaped delimiters, so it cannot start or end inside another key or value (keys
 * never hold a quote or a backslash: the metadata key rules). A plain substring position, not LIKE
 * (case-insensitive on SQLite, and `%`/`_` would need escaping) nor the JSON functions (which differ
 * between the two databases and would parse every row's text).
 */
function metadataHasPair(ctx: QueryContext, label: { name: string; value: string }) {
  const needle = `${JSON.stringify(label.name)}:${JSON.stringify(label.value)}`;
  return sql<boolean>`${sql.raw(ctx.dialect.substringPositionFunction)}(metadata, ${needle}) > 0`;
}

function assertLimit(limit: number): void {
  assertInteger('limit', limit);
  if (limit < 1) throw new RangeError('a page limit must be at least 1');
}
