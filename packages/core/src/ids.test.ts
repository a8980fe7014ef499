import { describe, expect, it } from 'vitest';
import { newId } from './ids.js';

describe('newId', () => {
  it('is the prefix, an underscore and 20 base-36 characters', () => {
    expect(newId('led')).toMatch(/^led_[0-9a-z]{20}$/);
  });

  it('never repeats across many refills of its random pool', () => {
    const ids = Array.from({ length: 5_000 }, () => newId('x'));
    expect(new Set(ids).size).toBe(ids.length);
  });
});
