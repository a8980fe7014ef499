import type { Micros } from '../storage/types.js';

export const MICROS_PER_USD = 1_000_000;

const DECIMAL = /^(\d+)(?:\.(\d*))?$/;

/**
 * Parses a non-negative decimal USD amount (`"0.15"`, `"3"`, `"0.000001"`, or a JSON number) into
 * integer micro-dollars, exactly: digits are read as text, never through a float. More than six
 * decimals, a sign, an exponent or anything else that is not a plain decimal throws a RangeError.
 */
export function parseUsdToMicros(value: string | number): Micros {
  const text = typeof value === 'number' ? numberToPlainString(value) : value.trim();
  const match = DECIMAL.exec(text);
  if (!match) throw new RangeError(`"${text}" is not a non-negative decimal amount`);
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > 6) throw new RangeError(`"${text}" has more than 6 decimals`);
  const micros = Number(whole) * MICROS_PER_USD + Number(fraction.padEnd(6, '0') || '0');
  if (!Number.isSafeInteger(micros)) throw new RangeError(`"${text}" is too large`);
  return micros;
}

function numberToPlainString(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`${value} is not a finite amount`);
  // String(0.000001) is "0.000001", but String(1e-7) is "1e-7": the regex then refuses it.
  return String(value);
}

/** Formats micros as a USD decimal string with exactly six decimals: 1_500_000 → "1.500000". */
export function formatMicrosAsUsd(micros: Micros): string {
  const sign = micros < 0 ? '-' : '';
  const abs = Math.abs(micros);
  const whole = Math.floor(abs / MICROS_PER_USD);
  const fraction = String(abs % MICROS_PER_USD).padStart(6, '0');
  return `${sign}${whole}.${fraction}`;
}

/**
 * Micros as a JSON number of USD for response fields such as `cost_usd`. The value is derived from
 * the integer (the authoritative amount is always the `*_micros` field next to it).
 */
export function microsToUsdNumber(micros: Micros): number {
  return Number(formatMicrosAsUsd(micros));
}
