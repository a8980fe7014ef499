import type { ModelUsage, UsageTotals } from '../api/api-types.js';

/** The `limit` models that cost the most (by integer micros), ties broken by request count. */
export function topModelsByCost(byModel: readonly ModelUsage[], limit: number): ModelUsage[] {
  return [...byModel]
    .sort((a, b) => b.cost_micros - a.cost_micros || b.requests - a.requests)
    .slice(0, limit);
}

/** Errors over requests of a window, as a fraction; null when there were no requests. */
export function errorRate(totals: Pick<UsageTotals, 'errors' | 'requests'>): number | null {
  return totals.requests === 0 ? null : totals.errors / totals.requests;
}
