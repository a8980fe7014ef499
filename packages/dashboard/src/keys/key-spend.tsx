import type { ApiKey } from '../api/api-types.js';
import { formatTimestamp } from '../format/format-time.js';
import { formatMicros, formatUsd } from '../format/format-usd.js';
import { LimitMeter } from '../ui/limit-meter.js';

const MICROS_PER_USD = 1_000_000;

/**
 * A key's spend against its cap: of the lifetime, or of the current UTC window with when it resets;
 * and what it spent today, this week and this month, whatever its reset.
 */
export function KeySpend({ apiKey }: { apiKey: ApiKey }) {
  const cap = apiKey.spend_limit_micros;
  const reset = apiKey.limit_reset;
  const windowUsd =
    reset === null
      ? null
      : { daily: apiKey.usage_daily, weekly: apiKey.usage_weekly, monthly: apiKey.usage_monthly }[reset];
  const spentMicros = windowUsd === null ? apiKey.spent_micros : Math.round(windowUsd * MICROS_PER_USD);
  return (
    <>
      <span data-testid="key-spend">
        {formatMicros(spentMicros)} {cap === null ? '(no cap)' : `of ${formatMicros(cap)}`}
        {reset !== null && ` ${reset}`}
      </span>
      {cap !== null && <LimitMeter spent={spentMicros} limit={cap} label="Share of the cap" />}
      {apiKey.limit_remaining !== null && (
        <div class="muted" data-testid="key-limit-remaining">
          {formatUsd(apiKey.limit_remaining)} left
          {apiKey.limit_resets_at !== null && `, resets ${formatTimestamp(apiKey.limit_resets_at)}`}
        </div>
      )}
      <div class="muted" data-testid="key-usage">
        today {formatUsd(apiKey.usage_daily)} · week {formatUsd(apiKey.usage_weekly)} · month{' '}
        {formatUsd(apiKey.usage_monthly)}
      </div>
    </>
  );
}
