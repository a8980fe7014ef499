/**
 * ⌈numerator / denominator⌉ for non-negative integers, computed in BigInt so products of prices and
 * token counts never lose precision. The result must fit a safe integer (checked).
 */
export function ceilDiv(numerator: bigint, denominator: bigint): number {
  if (numerator < 0n || denominator <= 0n) throw new RangeError('ceilDiv expects n >= 0 and d > 0');
  const quotient = (numerator + denominator - 1n) / denominator;
  const result = Number(quotient);
  if (!Number.isSafeInteger(result)) throw new RangeError('amount exceeds the safe integer range');
  return result;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A non-negative amount of micros as a number, capped at `Number.MAX_SAFE_INTEGER` (about nine
 * billion USD). Metering uses it where an upstream or a request can name absurd counts: a worst case
 * that large is refused by the hold, and a charge that large is cut to its hold, so the figure only
 * has to stay exact up to any real balance.
 */
export function saturatedMicros(amount: bigint): number {
  if (amount < 0n) throw new RangeError('saturatedMicros expects an amount >= 0');
  return Number(amount > MAX_SAFE ? MAX_SAFE : amount);
}

/** ⌈numerator / denominator⌉ as {@link saturatedMicros}: never throws for size. */
export function ceilDivSaturating(numerator: bigint, denominator: bigint): number {
  if (numerator < 0n || denominator <= 0n) throw new RangeError('ceilDiv expects n >= 0 and d > 0');
  return saturatedMicros((numerator + denominator - 1n) / denominator);
}
