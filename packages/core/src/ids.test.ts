import { afterEach, describe, expect, it, vi } from 'vitest';
import { newId } from './ids.js';

describe('newId', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is the prefix, an underscore and 20 base-36 characters', () => {
    expect(newId('led')).toMatch(/^led_[0-9a-z]{20}$/);
  });

  it('never repeats across many refills of its random pool', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('x'));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('leads with the millisecond it was made, so later ids sort after earlier ones', () => {
    vi.useFakeTimers({ now: Date.UTC(2026, 10, 25, 12) });
    const first = newId('req');
    vi.setSystemTime(Date.UTC(2026, 10, 25, 12) + 1);
    const second = newId('req');
    expect(Number.parseInt(first.slice(4, 13), 36)).toBe(Date.UTC(2026, 10, 25, 12));
    expect(second > first).toBe(true);
    // Within one millisecond the random part still tells ids apart.
    expect(new Set(Array.from({ length: 1_000 }, () => newId('req'))).size).toBe(1_000);
  });
});
