import type { EpochMs } from '../storage/scalars.js';

/** The windows a key's spend limit can reset on (OpenRouter's names). */
export const LIMIT_RESETS = ['daily', 'weekly', 'monthly'] as const;
export type LimitReset = (typeof LIMIT_RESETS)[number];

export const DAY_MS = 86_400_000;

/**
 * The start of the UTC day containing `at`. Spend is kept per key and UTC day, so every window is a
 * whole number of days and starts on a day's start: the day itself, its week, its month.
 */
export function utcDayStart(at: EpochMs): EpochMs {
  return Math.floor(at / DAY_MS) * DAY_MS;
}

/** The start of the UTC week (Monday 00:00) containing `at`. Day 0 of the epoch was a Thursday. */
export function utcWeekStart(at: EpochMs): EpochMs {
  const day = Math.floor(at / DAY_MS);
  const sinceMonday = (((day + 3) % 7) + 7) % 7;
  return (day - sinceMonday) * DAY_MS;
}

/** The start of the UTC calendar month (the 1st 00:00) containing `at`. */
export function utcMonthStart(at: EpochMs): EpochMs {
  return limitWindow('monthly', at).start;
}

/**
 * The window of `reset` containing `at`, half-open `[start, end)`: calendar-aligned in UTC, so every
 * key's window turns at the same instant and nothing has to reset it (the next window's spend simply
 * starts from its own first day).
 */
export function limitWindow(reset: LimitReset, at: EpochMs): { start: EpochMs; end: EpochMs } {
  if (!Number.isFinite(at)) throw new RangeError(`not a time: ${String(at)}`);
  switch (reset) {
    case 'daily': {
      const start = utcDayStart(at);
      return { start, end: start + DAY_MS };
    }
    case 'weekly': {
      const start = utcWeekStart(at);
      return { start, end: start + 7 * DAY_MS };
    }
    case 'monthly': {
      const date = new Date(at);
      return {
        start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
        // Date.UTC rolls month 12 over into January of the next year.
        end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
      };
    }
  }
}

/** When the window of `reset` containing `now` ends, in ISO 8601: what key views and the 402 name. */
export function limitResetsAt(reset: LimitReset, now: EpochMs): string {
  return new Date(limitWindow(reset, now).end).toISOString();
}
