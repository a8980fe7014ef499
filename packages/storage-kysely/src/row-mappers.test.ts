import { describe, expect, it } from 'vitest';
import { toBoolean, toInteger, toNullableInteger } from './row-mappers.js';

describe('row mappers', () => {
  it.each([
    ['a number', 42, 42],
    ['an int8 string from pg', '9007199254740991', Number.MAX_SAFE_INTEGER],
    ['a negative string', '-1500', -1500],
    ['a bigint', 123n, 123],
  ])('toInteger - reads %s', (_, value, expected) => {
    expect(toInteger(value)).toBe(expected);
  });

  it.each([
    ['beyond 2^53', '9007199254740993'],
    ['a fraction', 1.5],
    ['a numeric string with a fraction', '2.50'],
    ['null', null],
    ['text', 'abc'],
  ])('toInteger - refuses %s rather than round money', (_, value) => {
    expect(() => toInteger(value)).toThrow(RangeError);
  });

  it('toNullableInteger - keeps NULL', () => {
    expect(toNullableInteger(null)).toBeNull();
    expect(toNullableInteger('7')).toBe(7);
  });

  it.each([
    [1, true],
    [0, false],
    [true, true],
    [false, false],
  ])('toBoolean - reads %s as %s', (value, expected) => {
    expect(toBoolean(value)).toBe(expected);
  });

  it('toBoolean - refuses anything else', () => {
    expect(() => toBoolean(2)).toThrow(TypeError);
  });
});
