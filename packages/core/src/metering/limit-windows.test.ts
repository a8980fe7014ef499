import { describe, expect, it } from 'vitest';
import { limitWindow, utcDayStart, utcMonthStart, utcWeekStart } from './limit-windows.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('limitWindow', () => {
  it('a day runs from 00:00 to the next 00:00 UTC', () => {
    expect(limitWindow('daily', at('2026-12-07T23:59:59.999Z'))).toEqual({
      start: at('2026-12-07T00:00:00Z'),
      end: at('2026-12-08T00:00:00Z'),
    });
    expect(iso(utcDayStart(at('2026-12-08T00:00:00Z')))).toBe('2026-12-08T00:00:00.000Z');
  });

  it('a week runs from Monday 00:00 UTC: Sunday belongs to the week before', () => {
    // 2026-12-06 is a Sunday, 2026-12-07 a Monday.
    expect(iso(utcWeekStart(at('2026-12-06T23:59:59Z')))).toBe('2026-11-30T00:00:00.000Z');
    expect(iso(utcWeekStart(at('2026-12-07T00:00:00Z')))).toBe('2026-12-07T00:00:00.000Z');
    expect(iso(limitWindow('weekly', at('2026-12-10T12:00:00Z')).end)).toBe('2026-12-14T00:00:00.000Z');
    // Weeks across a year's end and before the epoch's first Monday.
    expect(iso(utcWeekStart(at('2027-01-01T00:00:00Z')))).toBe('2026-12-28T00:00:00.000Z');
    expect(iso(utcWeekStart(at('1970-01-01T05:00:00Z')))).toBe('1969-12-29T00:00:00.000Z');
  });

  it('a month runs from the 1st, whatever its length, leap February included', () => {
    expect(iso(utcMonthStart(at('2027-01-31T23:59:59Z')))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(limitWindow('monthly', at('2027-01-31T23:59:59Z')).end)).toBe('2027-02-01T00:00:00.000Z');
    expect(iso(limitWindow('monthly', at('2026-12-31T23:59:59Z')).end)).toBe('2027-01-01T00:00:00.000Z');
    expect(limitWindow('monthly', at('2028-02-29T12:00:00Z'))).toEqual({
      start: at('2028-02-01T00:00:00Z'),
      end: at('2028-03-01T00:00:00Z'),
    });
    expect(iso(limitWindow('daily', at('2028-02-28T23:59:59Z')).end)).toBe('2028-02-29T00:00:00.000Z');
  });
});
