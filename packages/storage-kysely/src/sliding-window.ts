/**
 * The sliding-window counter behind `Storage.hitRateLimit`, as pure integer arithmetic.
 *
 * Time is cut into fixed windows of `windowMs`; each (subject, window start) row counts the hits
 * admitted in that window. At `elapsedMs` into the current window, the previous window is assumed to
 * have spread its hits evenly, and the part of it still inside the sliding window ending now is
 * weighted in:
 *
 *     estimate = ⌊previous × (windowMs − elapsedMs) / windowMs⌋ + current
 *
 * A hit is admitted when `estimate < limit` (and then counted in `current`); a refused hit is not
 * counted. Everything is integer arithmetic (BigInt for the product), so no rounding differs between
 * processes.
 *
 * `retryAfterMs` is the smallest wait after which the estimate would be `< limit` if no other hit
 * arrived. With `k = limit − 1 − current`, the current window admits again at the first elapsed time
 * `e` with `⌊previous × (windowMs − e) / windowMs⌋ ≤ k`, i.e. `previous × (windowMs − e) ≤
 * (k + 1) × windowMs − 1`, i.e. `e ≥ windowMs − ⌊((k + 1) × windowMs − 1) / previous⌋`. When that
 * is not inside the window (or `k < 0`), the wait runs into the next window, where `current`
 * becomes the previous count and nothing is current yet: `e' ≥ windowMs − ⌊(limit × windowMs − 1)
 * / current⌋` (at least 0) into it.
 */
export interface SlidingWindowState {
  /** Hits admitted in the previous window. */
  previous: number;
  /** Hits admitted so far in the current window. */
  current: number;
  limit: number;
  windowMs: number;
  /** Milliseconds since the current window started: `now − ⌊now / windowMs⌋ × windowMs`. */
  elapsedMs: number;
}

/** Whether one more hit is admitted now, and if not how long until one would be. */
export function slidingWindowDecision(state: SlidingWindowState): { allowed: boolean; retryAfterMs: number } {
  const { previous, current, limit, windowMs, elapsedMs } = state;
  if (weightedEstimate(previous, current, windowMs, elapsedMs) < BigInt(limit)) {
    return { allowed: true, retryAfterMs: 0 };
  }
  const W = BigInt(windowMs);
  const k = BigInt(limit - 1 - current);
  if (k >= 0n && previous > 0) {
    const admitAt = W - ((k + 1n) * W - 1n) / BigInt(previous);
    if (admitAt < W) return { allowed: false, retryAfterMs: Number(admitAt) - elapsedMs };
  }
  const intoNext = current === 0 ? 0n : W - (BigInt(limit) * W - 1n) / BigInt(current);
  const admitNext = intoNext > 0n ? intoNext : 0n;
  return { allowed: false, retryAfterMs: windowMs - elapsedMs + Number(admitNext) };
}

/** `⌊previous × (windowMs − elapsedMs) / windowMs⌋ + current`, exactly. */
export function weightedEstimate(
  previous: number,
  current: number,
  windowMs: number,
  elapsedMs: number,
): bigint {
  return (BigInt(previous) * BigInt(windowMs - elapsedMs)) / BigInt(windowMs) + BigInt(current);
}

/** The start of the window containing `now`. */
export function windowStart(now: number, windowMs: number): number {
  return Math.floor(now / windowMs) * windowMs;
}
