import { type Guardrail, type NewGuardrail, newId } from '@tollgate/core';
import { requireAccount } from './account-queries.js';
import { type QueryContext, write } from './query-context.js';
import { mapGuardrail } from './row-mappers.js';

/**
 * `Storage.createGuardrail`: the account is checked inside the insert's transaction for a clear
 * error; the schema enforces it too (foreign key).
 */
export async function createGuardrail(ctx: QueryContext, input: NewGuardrail): Promise<Guardrail> {
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    return trx
      .insertInto('guardrails')
      .values({
        id: newId('grd'),
        account_id: input.accountId,
        name: input.name,
        stage: input.stage,
        category: input.category,
        pattern: input.pattern,
        created_at: input.now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return mapGuardrail(row);
}

/** `Storage.listGuardrails`: oldest first, rules created in the same millisecond by id. */
export async function listGuardrails(ctx: QueryContext, accountId: string): Promise<Guardrail[]> {
  const rows = await ctx.db
    .selectFrom('guardrails')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(mapGuardrail);
}

/** `Storage.deleteGuardrail`: one DELETE scoped to the account. */
export async function deleteGuardrail(ctx: QueryContext, accountId: string, id: string): Promise<boolean> {
  const result = await write(ctx, (trx) =>
    trx.deleteFrom('guardrails').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst(),
  );
  return Number(result.numDeletedRows) > 0;
}
