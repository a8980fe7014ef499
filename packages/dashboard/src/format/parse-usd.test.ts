import { describe, expect, it } from 'vitest';
import { parseOptionalUsd } from './parse-usd.js';

describe('parse-usd', () => {
  it('parseOptionalUsd - empty is null, a positive amount is kept', () => {
    expect(parseOptionalUsd('  ', 'bad')).toEqual({ ok: true, value: null });
    expect(parseOptionalUsd(' 2.50 ', 'bad')).toEqual({ ok: true, value: 2.5 });
  });

  it('parseOptionalUsd - refuses zero, negatives, text and infinity with the message given', () => {
    for (const bad of ['0', '-1', 'ten', 'Infinity']) {
      expect(parseOptionalUsd(bad, 'bad')).toEqual({ ok: false, message: 'bad' });
    }
  });
});
