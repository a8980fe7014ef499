import type { EpochMs, LedgerEntry, LedgerPage, RecordCursor, RequestRecord } from '@tollgate/core';
import { sql } from 'kysely';
import { assertInteger, type QueryContext } from './query-context.js';
import { mapLedgerEntry, mapRequestRecord } from './row-mappers.js';

/**
 * `Storage.listRequestRecordsPage`: a keyset page, newest first. The row-value comparison
 * `(created_at, id) < (?, ?)` and the ORDER BY are both served by `(account_id, created_at, id)`
 * (migration 0009), so a page costs the same wherever it starts and nothing is sorted in memory.
 */
export async function listRequestRecordsPage(
  ctx: QueryContext,
  accountId: string,
  options: { since: EpochMs; limit: number; before?: RecordCursor },
): Promise<RequestRecord[]> {
  assertInteger('since', options.since);
  assertLimit(options.limit);
  const { before } = options;
  if (before) assertInteger('before.createdAt', before.createdAt);
  const rows = await ctx.db
    .selectFrom('request_records')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('created_at', '>=', options.since)
    .$if(before !== undefined, (qb) =>
      qb.where(sql<boolean>`(created_at, id) < (${before!.createdAt}, ${before!.id})`),
    )
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
 * the index on the account and the insertion order (migration 0009).
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

function assertLimit(limit: number): void {
  assertInteger('limit', limit);
  if (limit < 1) throw new RangeError('a page limit must be at least 1');
}
