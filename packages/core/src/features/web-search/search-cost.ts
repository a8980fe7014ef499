import { MICROS_PER_USD } from '../../money/micros.js';
import type { Micros } from '../../storage/types.js';

/**
 * A backend's reported cost in USD (a JSON number, e.g. `costDollars.total: 0.005`) as whole
 * micros, exactly: the number's decimal text is read digit by digit (never multiplied as a float),
 * and a part below a micro rounds up to the next micro. `null` for anything that is not a finite,
 * non-negative number.
 */
export function reportedCostMicros(total: unknown): Micros | null {
  if (typeof total !== 'number' || !Number.isFinite(total) || total < 0) return null;
  // `toFixed(20)` is the exact decimal text of small values; `String` is exact for the rest.
  const text = /e/i.test(String(total)) ? total.toFixed(20) : String(total);
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
  if (!match) return null;
  const whole = Number(match[1]);
  const fraction = match[2] ?? '';
  let micros = whole * MICROS_PER_USD + Number(fraction.slice(0, 6).padEnd(6, '0'));
  if (/[1-9]/.test(fraction.slice(6))) micros += 1;
  return Number.isSafeInteger(micros) ? micros : null;
}
