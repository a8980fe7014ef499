import type { DailyUsage } from '../api/api-types.js';

const DAY_MS = 86_400_000;

/** A day with no requests. */
export function emptyDay(date: string): DailyUsage {
  return {
    date,
    requests: 0,
    errors: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    cost_micros: 0,
    cost_usd: 0,
    saved_micros: 0,
    saved_usd: 0,
    byok_requests: 0,
    cache_hits: 0,
  };
}

/**
 * One entry for each of the `days` UTC days starting at `since` (ISO), in date order: the API's
 * entry for that date, else an empty day. The API already fills gaps today; this keeps the chart
 * right if it ever stops, and drops entries outside the window.
 */
export function fillDaily(daily: readonly DailyUsage[], since: string, days: number): DailyUsage[] {
  const byDate = new Map(daily.map((day) => [day.date, day]));
  const first = Math.floor(Date.parse(since) / DAY_MS);
  const filled: DailyUsage[] = [];
  for (let i = 0; i < days; i++) {
    const date = new Date((first + i) * DAY_MS).toISOString().slice(0, 10);
    filled.push(byDate.get(date) ?? emptyDay(date));
  }
  return filled;
}
