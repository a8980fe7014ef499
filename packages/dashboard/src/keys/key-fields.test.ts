import { describe, expect, it } from 'vitest';
import { fieldText, parseKeyFields, parseRpmField, parseSpendLimitField } from './key-fields.js';

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

  it('parseKeyFields - trims the name and reads both limits', () => {
    expect(parseKeyFields({ name: ' ci ', limit: '2.5', reset: '', rpm: '' }, 'no name')).toEqual({
      ok: true,
      value: { name: 'ci', spend_limit_usd: 2.5, limit_reset: null, rate_limit_rpm: null },
    });
    expect(parseKeyFields({ name: 'ci', limit: '5', reset: 'daily', rpm: '' }, 'no name')).toEqual({
      ok: true,
      value: { name: 'ci', spend_limit_usd: 5, limit_reset: 'daily', rate_limit_rpm: null },
    });
  });

  it('parseKeyFields - refuses the first bad field, the name with the message given', () => {
    expect(parseKeyFields({ name: ' ', limit: 'x', reset: '', rpm: 'x' }, 'no name')).toEqual({
      ok: false,
      message: 'no name',
    });
    expect(parseKeyFields({ name: 'a', limit: '0', reset: '', rpm: 'x' }, 'no name')).toEqual(
      parseSpendLimitField('0'),
    );
    expect(parseKeyFields({ name: 'a', limit: '', reset: '', rpm: '1.5' }, 'no name')).toEqual(
      parseRpmField('1.5'),
    );
  });

  it('fieldText - shows null as an empty field', () => {
    expect(fieldText(null)).toBe('');
    expect(fieldText(2.5)).toBe('2.5');
  });
});
