import { useMemo, useState } from 'preact/hooks';
import type { KeyInfo, Usage } from '../api/api-types.js';
import { useLoad } from '../api/use-load.js';
import { formatPercent } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { fillDaily } from '../usage/fill-daily.js';
import { MonthToDate } from './month-to-date.js';
import { SpendChart } from './spend-chart.js';
import { TopModels } from './top-models.js';

const RANGES = [7, 30, 90] as const;

/** Balance, month-to-date against the ceiling, spend per day, top models and the error rate. */
export function OverviewPage() {
  const [days, setDays] = useState<number>(30);
  const info = useLoad((api) => api.get<{ data: KeyInfo }>('/v1/key'), []);
  const usage = useLoad((api) => api.get<{ data: Usage }>(`/v1/usage?days=${days}`), [days]);
  const series = useMemo(
    () => (usage.data ? fillDaily(usage.data.data.daily, usage.data.data.since, usage.data.data.days) : null),
    [usage.data],
  );
  const totals = usage.data?.data.totals;

  return (
    <section>
      <h1>Overview</h1>
      <ErrorBanner message={info.error ?? usage.error} />
      <div class="cards">
        <div class="card">
          <h2>Balance</h2>
          <p class="figure" data-testid="balance">
            {info.data ? formatMicros(info.data.data.balance_micros) : '…'}
          </p>
        </div>
        <MonthToDate info={info.data?.data ?? null} />
        <div class="card">
          <h2>Error rate</h2>
          <p class="figure" data-testid="error-rate">
            {totals ? formatPercent(totals.errors, totals.requests) : '…'}
          </p>
          {totals && (
            <p class="muted">
              {plural(totals.errors, 'error')} in {plural(totals.requests, 'request')}, last {days} days
            </p>
          )}
        </div>
      </div>

      <div class="section-head">
        <h2>Spend per day</h2>
        <fieldset class="segmented">
          <legend class="visually-hidden">Range</legend>
          {RANGES.map((n) => (
            <button
              key={n}
              type="button"
              data-testid={`range-${n}`}
              aria-pressed={days === n}
              onClick={() => setDays(n)}
            >
              {n} days
            </button>
          ))}
        </fieldset>
      </div>
      {series ? <SpendChart days={series} /> : <div class="chart" data-testid="spend-chart" />}
      {totals && (
        <p class="muted">
          Total {formatMicros(totals.cost_micros)} over {plural(totals.requests, 'request')}
          {totals.saved_micros > 0 && `, ${formatMicros(totals.saved_micros)} saved`}.
        </p>
      )}

      <h2>Top models</h2>
      <TopModels byModel={usage.data?.data.by_model ?? []} totalMicros={totals?.cost_micros ?? 0} />
    </section>
  );
}

/** `1 request`, `2 requests`. */
function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
