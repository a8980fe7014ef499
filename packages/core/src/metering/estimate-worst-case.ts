import type { RoutePricing } from '../catalogue/catalogue.js';
import { ceilDivSaturating, saturatedMicros } from '../money/ceil-div.js';
import type { Micros } from '../storage/types.js';
import { type MeteredUsage, type Unit, unitLinesMicros, unitPrice } from './usage.js';

/**
 * Estimated tokens of a text for the pre-flight (product.md): ⌈ASCII characters / 4⌉ plus one token
 * per non-ASCII UTF-16 unit, since CJK and similar scripts run about a token per character. Counting
 * units rather than code points can only over-estimate (an astral character counts twice).
 */
export function estimateTokens(...texts: string[]): number {
  let ascii = 0;
  let other = 0;
  for (const text of texts) {
    const counted = countCharacters(text);
    ascii += counted.ascii;
    other += counted.other;
  }
  return tokensOf(ascii, other);
}

/** A text's ASCII characters and other UTF-16 units, the two classes `estimateTokens` counts. */
export function countCharacters(text: string): { ascii: number; other: number } {
  let ascii = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) < 0x80) ascii++;
  return { ascii, other: text.length - ascii };
}

/** `estimateTokens` of counted characters. */
export function tokensOf(ascii: number, other: number): number {
  return Math.ceil(ascii / 4) + other;
}

/** The most a request may cost, and the usage that figure prices. */
export interface WorstCase {
  micros: Micros;
  usage: MeteredUsage;
}

/**
 * Prices a worst-case usage at the highest rate of each line among the candidate routes: prompt
 * tokens at the highest prompt-side rate (a cache write may cost more than a plain prompt token),
 * completion tokens at the highest completion rate, rounded up once; then each unit line at the
 * highest price of its unit, which are whole micros already.
 */
export function priceWorstCase(usage: MeteredUsage, routes: readonly RoutePricing[]): WorstCase {
  let prompt = 0;
  let completion = 0;
  for (const route of routes) {
    prompt = Math.max(prompt, route.prompt, route.cacheWrite ?? 0);
    completion = Math.max(completion, route.completion);
  }
  const tokens = ceilDivSaturating(
    BigInt(usage.promptTokens) * BigInt(prompt) + BigInt(usage.completionTokens) * BigInt(completion),
    1_000_000n,
  );
  const units = unitLinesMicros(usage, (unit) => highestUnitPrice(routes, unit));
  // A request asking for absurd amounts holds an amount no balance covers: refused, never thrown.
  return { micros: saturatedMicros(BigInt(tokens) + units), usage };
}

/** The highest price of one `unit` among the candidate routes (0 with none). */
function highestUnitPrice(routes: readonly RoutePricing[], unit: Unit): Micros {
  let highest = 0;
  for (const route of routes) highest = Math.max(highest, unitPrice(route, unit));
  return highest;
}
