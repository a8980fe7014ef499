import type { EpochMs } from '@tollgate/core';

/** The UTC calendar month containing `at`, as a half-open range `[start, end)` of epoch ms. */
export function utcMonthContaining(at: EpochMs): { start: EpochMs; end: EpochMs } {
  if (!Number.isFinite(at)) throw new RangeError(`not a time: ${String(at)}`);
  const date = new Date(at);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  // Date.UTC rolls month 12 over into January of the next year.
  return { start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) };
}
