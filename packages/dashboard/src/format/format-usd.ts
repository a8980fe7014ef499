const MICROS_PER_USD = 1_000_000;

/**
 * Integer micro-dollars as USD text: `$4.99`, `$0.000123`, `-$1,234.50`. Exact (integer arithmetic
 * only); at least two decimals, at most six, trailing zeros beyond the cents trimmed.
 */
export function formatMicros(micros: number): string {
  const whole = Math.trunc(micros);
  const sign = whole < 0 ? '-' : '';
  const abs = Math.abs(whole);
  const dollars = Math.floor(abs / MICROS_PER_USD);
  const fraction = String(abs % MICROS_PER_USD)
    .padStart(6, '0')
    .replace(/0{1,4}$/, '');
  return `${sign}$${groupThousands(dollars)}.${fraction}`;
}

/** A `*_usd` number from the API as USD text, rounded to the micro-dollar it stands for. */
export function formatUsd(usd: number): string {
  return formatMicros(Math.round(usd * MICROS_PER_USD));
}

/** A nullable limit: `none` when the API gives null. */
export function formatLimitUsd(usd: number | null): string {
  return usd === null ? 'none' : formatUsd(usd);
}

function groupThousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
