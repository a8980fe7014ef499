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
