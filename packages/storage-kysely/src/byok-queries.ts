import type { ByokKey, NewByokKey } from '@tollgate/core';
import { sql } from 'kysely';
import { requireAccount } from './account-queries.js';
import { type QueryContext, write } from './query-context.js';
import { mapByokKey } from './row-mappers.js';

/**
 * `Storage.createByokKey`: the account is checked inside the insert's transaction for a clear
 * error; the schema enforces it too (foreign key), and the primary key refuses a taken id. The
 * sealed key is stored exactly as given.
 */
export async function createByokKey(ctx: QueryContext, input: NewByokKey): Promise<ByokKey> {
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    return trx
      .insertInto('byok_keys')
      .values({
        id: input.id,
        account_id: input.accountId,
        provider: input.provider,
        label: input.label,
        allow_fallback: ctx.dialect.bool(input.allowFallback),
        sealed_key: input.sealedKey,
        created_at: ctx.now(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return mapByokKey(row);
}

/** `Storage.listByokKeys`: oldest first, keys created in the same millisecond in creation order. */
export async function listByokKeys(ctx: QueryContext, accountId: string): Promise<ByokKey[]> {
  const rows = await ctx.db
    .selectFrom('byok_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy(sql.ref(ctx.dialect.insertionOrderColumn))
    .execute();
  return rows.map(mapByokKey);
}

/** `Storage.deleteByokKey`: one DELETE scoped to the account. */
export async function deleteByokKey(ctx: QueryContext, accountId: string, id: string): Promise<boolean> {
  const result = await write(ctx, (trx) =>
    trx.deleteFrom('byok_keys').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst(),
  );
  return Number(result.numDeletedRows) > 0;
}
