import { describe, expect, it } from 'vitest';
import { parseLabelFilter } from './label-filter.js';

describe('parseLabelFilter', () => {
  it('parseLabelFilter - an empty field filters nothing', () => {
    expect(parseLabelFilter('  ')).toEqual({ ok: true, value: undefined });
  });

  it('parseLabelFilter - trims around the name and the value', () => {
    expect(parseLabelFilter(' team = search ')).toEqual({ ok: true, value: 'team=search' });
  });

  it('parseLabelFilter - keeps "=" inside the value', () => {
    expect(parseLabelFilter('q=a=b')).toEqual({ ok: true, value: 'q=a=b' });
  });

  it('parseLabelFilter - refuses text without "=" or without a name', () => {
    expect(parseLabelFilter('team').ok).toBe(false);
    expect(parseLabelFilter('=x').ok).toBe(false);
  });
});
