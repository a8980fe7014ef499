import type { EpochMs, UsageRow } from '@tollgate/core';
import { sql } from 'kysely';
import { assertInteger, type QueryContext } from './query-context.js';
import { toInteger } from './row-mappers.js';

const DAY_MS = 86_400_000;

/**
 * `Storage.listUsage`: one GROUP BY over the account's request records from `since` on, per UTC day
 * (`created_at / 86400000`: integer division in both databases, since `created_at` is an integer
 * column and the divisor an integer literal), model and provider. Rows come back ordered by day,
 * then model and provider with nulls first (sorted here: the databases order NULL differently).
 * Requests still in progress are not counted until they settle.
 */
export async function listUsage(ctx: QueryContext, accountId: string, since: EpochMs): Promise<UsageRow[]> {
  assertInteger('since', since);
  const yes = sql.lit(ctx.dialect.bool(true));
  // A literal, not a parameter, so the grouped expression and the selected one are the same text.
  const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
  const count = (condition: ReturnType<typeof sql>) => sql`sum(case when ${condition} then 1 else 0 end)`;
  const rows = await ctx.db
    .selectFrom('request_records')
    .select((eb) => [
      day.as('day'),
      'model',
      'provider',
      eb.fn.countAll().as('requests'),
      count(sql`status <> 'success'`).as('errors'),
      eb.fn.sum('prompt_tokens').as('prompt_tokens'),
      eb.fn.sum('completion_tokens').as('completion_tokens'),
      eb.fn.sum('cached_tokens').as('cached_tokens'),
      eb.fn.sum('cost_micros').as('cost_micros'),
      eb.fn.sum('saved_micros').as('saved_micros'),
      count(sql`byok = ${yes}`).as('byok_requests'),
      count(sql`cache_hit = ${yes}`).as('cache_hits'),
    ])
    .where('account_id', '=', accountId)
    .where('created_at', '>=', since)
    .where('status', '<>', 'in_progress')
    .groupBy([day, 'model', 'provider'])
    .execute();
  return rows.map(mapUsageRow).sort(byDayModelProvider);
}

/** Sums and counts arrive as int8 or numeric strings from pg, numbers elsewhere. */
function mapUsageRow(row: Record<string, unknown>): UsageRow {
  return {
    day: toInteger(row.day),
    model: (row.model as string | null) ?? null,
    provider: (row.provider as string | null) ?? null,
    requests: toInteger(row.requests),
    errors: toInteger(row.errors),
    promptTokens: toInteger(row.prompt_tokens),
    completionTokens: toInteger(row.completion_tokens),
    cachedTokens: toInteger(row.cached_tokens),
    costMicros: toInteger(row.cost_micros),
    savedMicros: toInteger(row.saved_micros),
    byokRequests: toInteger(row.byok_requests),
    cacheHits: toInteger(row.cache_hits),
  };
}

function byDayModelProvider(a: UsageRow, b: UsageRow): number {
  return a.day - b.day || compareNullsFirst(a.model, b.model) || compareNullsFirst(a.provider, b.provider);
}

function compareNullsFirst(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return -1;
  if (b === null) return 1;
  return a < b ? -1 : 1;
}
