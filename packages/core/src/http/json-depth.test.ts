import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-depth.js';

const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

describe('nestsDeeperThan', () => {
  it.each([
    ['{}', 1, false],
    ['{}', 0, true],
    [nested(3), 3, false],
    [nested(4), 3, true],
    ['{"a":[{"b":1}]}', 3, false],
    ['{"a":[{"b":{}}]}', 3, true],
  ])('%s with a limit of %d → %s', (text, max, expected) => {
    expect(nestsDeeperThan(text, max)).toBe(expected);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(nestsDeeperThan(JSON.stringify({ a: '[[[[[[[[' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ a: 'say \\"[[[[" and [[[[' }), 1)).toBe(false);
  });

  it('finds deep nesting anywhere, after siblings close again', () => {
    const text = `{"messages":[{"role":"user","content":"x"}],"extra":${nested(200)}}`;
    expect(nestsDeeperThan(text, 128)).toBe(true);
    expect(nestsDeeperThan(text, 202)).toBe(false);
  });
});
