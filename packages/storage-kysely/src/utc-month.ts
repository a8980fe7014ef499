import { type EpochMs, limitWindow } from '@tollgate/core';

/**
 * The UTC calendar month containing `at`, as a half-open range `[start, end)` of epoch ms: the same
 * month a key's monthly limit window is, so the account's ceiling and the key's window turn together.
 */
export function utcMonthContaining(at: EpochMs): { start: EpochMs; end: EpochMs } {
  return limitWindow('monthly', at);
}
