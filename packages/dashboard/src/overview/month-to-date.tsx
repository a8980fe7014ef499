import type { KeyInfo } from '../api/api-types.js';
import { formatMicros } from '../format/format-usd.js';
import { LimitMeter } from '../ui/limit-meter.js';

/** This month's spend against the account's monthly ceiling (none when unset). */
export function MonthToDate({ info }: { info: KeyInfo | null }) {
  const mtd = info?.month_to_date;
  return (
    <div class="card" data-testid="month-to-date">
      <h2>Month to date{mtd && ` (${mtd.month})`}</h2>
      {!mtd ? (
        <p class="figure">…</p>
      ) : (
        <>
          <p class="figure">
            {formatMicros(mtd.spent_micros)}
            <span class="muted">
              {' '}
              {mtd.limit_micros === null ? '(no monthly ceiling)' : `of ${formatMicros(mtd.limit_micros)}`}
            </span>
          </p>
          {mtd.limit_micros !== null && (
            <>
              <LimitMeter spent={mtd.spent_micros} limit={mtd.limit_micros} label="Share of the ceiling" />
              <p class="muted">{formatMicros(mtd.remaining_micros ?? 0)} remaining this month</p>
            </>
          )}
        </>
      )}
    </div>
  );
}
