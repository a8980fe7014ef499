import { describe, expect, it } from 'vitest';
import { fieldText, parseRpmField, parseSpendLimitField } from './key-fields.js';

describe('key-fields', () => {
  it('parseSpendLimitField - empty means no limit, a positive amount is kept', () => {
    expect(parseSpendLimitField('')).toEqual({ ok: true, value: null });
    expect(parseSpendLimitField(' 2.50 ')).toEqual({ ok: true, value: 2.5 });
  });

  it('parseSpendLimitField - refuses zero, negatives and text', () => {
    for (const bad of ['0', '-1', 'ten', 'Infinity']) expect(parseSpendLimitField(bad).ok).toBe(false);
  });

  it('parseRpmField - empty means the account default, whole numbers from 1', () => {
    expect(parseRpmField('')).toEqual({ ok: true, value: null });
    expect(parseRpmField('60')).toEqual({ ok: true, value: 60 });
    for (const bad of ['0', '1.5', '-3', 'x']) expect(parseRpmField(bad).ok).toBe(false);
  });

  it('fieldText - shows null as an empty field', () => {
    expect(fieldText(null)).toBe('');
    expect(fieldText(2.5)).toBe('2.5');
  });
});
