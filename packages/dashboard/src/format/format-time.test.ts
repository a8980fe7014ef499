import { describe, expect, it } from 'vitest';
import { formatDuration, formatPercent, formatTimestamp } from './format-time.js';

describe('format-time', () => {
  it('formatTimestamp - drops the T, the milliseconds and the Z', () => {
    expect(formatTimestamp('2026-11-24T23:31:55.123Z')).toBe('2026-11-24 23:31:55');
    expect(formatTimestamp('2026-11-24T23:31:55Z')).toBe('2026-11-24 23:31:55');
  });

  it('formatDuration - uses ms under a second, seconds above, a dash when unknown', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(2400)).toBe('2.4 s');
    expect(formatDuration(null)).toBe('–');
  });

  it('formatPercent - one decimal, a dash for an empty window', () => {
    expect(formatPercent(1, 40)).toBe('2.5%');
    expect(formatPercent(0, 0)).toBe('–');
  });
});
