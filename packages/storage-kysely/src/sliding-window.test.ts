import { describe, expect, it } from 'vitest';
import {
  type SlidingWindowState,
  slidingWindowDecision,
  weightedEstimate,
  windowStart,
} from './sliding-window.js';

const state = (previous: number, current: number, elapsedMs: number, limit = 10, windowMs = 60_000) =>
  ({ previous, current, limit, windowMs, elapsedMs }) satisfies SlidingWindowState;

/** The first wait after which a hit would be admitted, found by trying every millisecond. */
function bruteForceWait({ previous, current, limit, windowMs, elapsedMs }: SlidingWindowState): number {
  for (let wait = 1; ; wait++) {
    const at = elapsedMs + wait;
    const estimate =
      at < windowMs
        ? weightedEstimate(previous, current, windowMs, at)
        : weightedEstimate(current, 0, windowMs, at - windowMs);
    if (estimate < BigInt(limit)) return wait;
  }
}

describe('sliding window', () => {
  it.each([
    ['an empty window', state(0, 0, 0), { allowed: true, retryAfterMs: 0 }],
    ['room left in the current window', state(0, 9, 59_999), { allowed: true, retryAfterMs: 0 }],
    [
      'half of a full previous window still counting',
      state(10, 4, 30_000),
      { allowed: true, retryAfterMs: 0 },
    ],
    ['a full window, refused into the next one', state(0, 10, 0), { allowed: false, retryAfterMs: 60_001 }],
    ['a full window near its end', state(0, 10, 59_999), { allowed: false, retryAfterMs: 2 }],
    [
      'the previous window decaying within this one',
      state(10, 5, 30_000),
      { allowed: false, retryAfterMs: 1 },
    ],
    [
      'six current: wait until ⌊10 × (60000 − e)/60000⌋ ≤ 3',
      state(10, 6, 30_001),
      { allowed: false, retryAfterMs: 6_000 },
    ],
    [
      'a heavy previous window decaying late in this one',
      state(30, 9, 0, 10, 1_000),
      { allowed: false, retryAfterMs: 967 },
    ],
    [
      'a previous window too heavy to decay within this one',
      state(20, 9, 0, 10, 10),
      { allowed: false, retryAfterMs: 10 },
    ],
    ['a limit of one', state(0, 1, 250, 1, 1_000), { allowed: false, retryAfterMs: 751 }],
  ])('slidingWindowDecision - %s', (_, input, expected) => {
    expect(slidingWindowDecision(input)).toEqual(expected);
  });

  it('slidingWindowDecision - retryAfterMs is the first wait a brute-force search admits at', () => {
    for (const windowMs of [7, 10, 1_000]) {
      for (const limit of [1, 2, 3, 7]) {
        for (let previous = 0; previous <= 2 * limit + 1; previous++) {
          for (let current = 0; current <= limit; current++) {
            for (let elapsedMs = 0; elapsedMs < windowMs; elapsedMs += Math.ceil(windowMs / 9)) {
              const input = { previous, current, limit, windowMs, elapsedMs };
              const decision = slidingWindowDecision(input);
              if (decision.allowed) continue;
              expect(decision.retryAfterMs, JSON.stringify(input)).toBe(bruteForceWait(input));
            }
          }
        }
      }
    }
  });

  it('weightedEstimate - is exact past 2^53 intermediate products', () => {
    expect(weightedEstimate(2 ** 40, 0, 2 ** 20, 1)).toBe(BigInt(2 ** 40) - 2n ** 20n);
  });

  it('windowStart - floors to the window, also for times that are not window-aligned', () => {
    expect(windowStart(1_700_000_059_999, 60_000)).toBe(1_700_000_040_000);
    expect(windowStart(1_700_000_040_000, 60_000)).toBe(1_700_000_040_000);
  });
});
