/** Backoff of the spec's Limits: full jitter, a uniform pick in [0, min(cap, base × 2^retry)). */
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 4000;

/**
 * The wait before retry number `retry` (0 = the wait before the second attempt).
 * `random` returns a number in [0, 1), injected so tests need no sleeping and no luck.
 */
export function fullJitterBackoff(retry: number, random: () => number): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/**
 * Upstream statuses that are retried on the same route (spec routing rule 2), plus Anthropic's 529
 * ("overloaded"), which the spec's list does not name but which means what a 503 means.
 */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 425, 429, 500, 502, 503, 504, 529]);

/** Upstream statuses that fail over to the next route without a retry (rule 3). */
export const FAIL_OVER_STATUSES: ReadonlySet<number> = new Set([501, 505]);
