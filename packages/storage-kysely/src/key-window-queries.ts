import { type EpochMs, type KeyWindowSpend, utcDayStart, utcMonthStart, utcWeekStart } from '@tollgate/core';
import { sql } from 'kysely';
import type { QueryContext } from './query-context.js';
import { toInteger } from './row-mappers.js';

/**
 * `Storage.getKeyWindowSpend`: each key's spend in the UTC day, week and month containing `at`, summed
 * from its days (`key_day_spend`) in one read over the earliest of the three starts.
 */
export async function getKeyWindowSpend(
  ctx: QueryContext,
  keyIds: readonly string[],
  at: EpochMs,
): Promise<Map<string, KeyWindowSpend>> {
  const spend = new Map<string, KeyWindowSpend>();
  if (keyIds.length === 0) return spend;
  const day = utcDayStart(at);
  const week = utcWeekStart(at);
  const month = utcMonthStart(at);
  const inWindow = (start: EpochMs) =>
    sql<number>`coalesce(sum(case when day_start >= ${start} then spent_micros else 0 end), 0)`;
  const rows = await ctx.db
    .selectFrom('key_day_spend')
    .select(['key_id', inWindow(day).as('daily'), inWindow(week).as('weekly'), inWindow(month).as('monthly')])
    .where('key_id', 'in', [...keyIds])
    .where('day_start', '>=', Math.min(week, month))
    .where('day_start', '<=', day)
    .groupBy('key_id')
    .execute();
  for (const row of rows) {
    spend.set(row.key_id, {
      dailyMicros: toInteger(row.daily),
      weeklyMicros: toInteger(row.weekly),
      monthlyMicros: toInteger(row.monthly),
    });
  }
  return spend;
}
