import { describe, expect, it } from 'vitest';
import { emptyDay } from './fill-daily.js';
import { errorRate, topModelsByCost } from './usage-summary.js';

const model = (name: string, cost: number, requests: number) => ({
  ...emptyDay('x'),
  model: name,
  cost_micros: cost,
  requests,
});

describe('usage-summary', () => {
  it('topModelsByCost - orders by cost, then requests, and keeps the first N', () => {
    const top = topModelsByCost([model('a', 5, 1), model('b', 9, 1), model('c', 5, 3), model('d', 1, 9)], 3);
    expect(top.map((m) => m.model)).toEqual(['b', 'c', 'a']);
  });

  it('errorRate - divides errors by requests, null for an empty window', () => {
    expect(errorRate({ errors: 1, requests: 4 })).toBe(0.25);
    expect(errorRate({ errors: 0, requests: 0 })).toBeNull();
  });
});
