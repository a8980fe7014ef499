import { describe, expect, it } from 'vitest';
import { emptyDay, fillDaily } from './fill-daily.js';

const day = (date: string, costMicros: number) => ({
  ...emptyDay(date),
  cost_micros: costMicros,
  requests: 1,
});

describe('fillDaily', () => {
  it('fillDaily - fills the days the API left out with zeros, in date order', () => {
    const filled = fillDaily([day('2026-11-24', 30), day('2026-11-22', 10)], '2026-11-21T00:00:00.000Z', 4);
    expect(filled.map((d) => [d.date, d.cost_micros])).toEqual([
      ['2026-11-21', 0],
      ['2026-11-22', 10],
      ['2026-11-23', 0],
      ['2026-11-24', 30],
    ]);
  });

  it('fillDaily - crosses month ends and drops entries outside the window', () => {
    const filled = fillDaily([day('2026-02-27', 5), day('2026-03-01', 7)], '2026-02-28T00:00:00.000Z', 2);
    expect(filled.map((d) => [d.date, d.cost_micros])).toEqual([
      ['2026-02-28', 0],
      ['2026-03-01', 7],
    ]);
  });
});
