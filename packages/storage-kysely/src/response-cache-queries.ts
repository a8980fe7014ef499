import type { CachedResponse, EpochMs } from '@tollgate/core';
import type { ResponseCacheTable } from './database.js';
import { columnsOf, type InsertRow, prepareQuery, valuesOf } from './prepared-query.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { mapCachedResponse } from './row-mappers.js';

/** `Storage.getCachedResponse`: the account's entry while `expires_at > now` (an expired one reads as absent). */
export async function getCachedResponse(
  ctx: QueryContext,
  accountId: string,
  lookupId: string,
  now: EpochMs,
): Promise<CachedResponse | null> {
  assertInteger('now', now);
  const row = await liveEntry.first(ctx, { accountId, lookupId, now });
  return row ? mapCachedResponse(row) : null;
}

const liveEntry = prepareQuery((db, p: { accountId: string; lookupId: string; now: EpochMs }) =>
  db
    .selectFrom('response_cache')
    .selectAll()
    .where('account_id', '=', p.accountId)
    .where('lookup_id', '=', p.lookupId)
    .where('expires_at', '>', p.now),
);

/**
 * `Storage.putCachedResponse`: one `INSERT … ON CONFLICT (account_id, lookup_id) DO UPDATE SET`
 * every other column from the new row. The row is written whole under its key's lock (Postgres)
 * or the write lock (SQLite), so concurrent writers of one entry leave the last one's row, never a
 * mix; an expired entry of the same key is simply replaced.
 */
export async function putCachedResponse(ctx: QueryContext, entry: CachedResponse): Promise<void> {
  assertInteger('createdAt', entry.createdAt);
  assertInteger('expiresAt', entry.expiresAt);
  await write(ctx, (trx) =>
    upsertEntry.run(
      ctx,
      {
        account_id: entry.accountId,
        lookup_id: entry.lookupId,
        sealed_body: entry.sealedBody,
        created_at: entry.createdAt,
        expires_at: entry.expiresAt,
      },
      trx,
    ),
  );
}

const CACHE_COLUMNS = columnsOf<ResponseCacheTable>()({
  account_id: true,
  lookup_id: true,
  sealed_body: true,
  created_at: true,
  expires_at: true,
});

const upsertEntry = prepareQuery((db, p: InsertRow<ResponseCacheTable>) =>
  db
    .insertInto('response_cache')
    .values(valuesOf(p, CACHE_COLUMNS))
    .onConflict((oc) =>
      oc.columns(['account_id', 'lookup_id']).doUpdateSet((eb) => ({
        sealed_body: eb.ref('excluded.sealed_body'),
        created_at: eb.ref('excluded.created_at'),
        expires_at: eb.ref('excluded.expires_at'),
      })),
    ),
);
