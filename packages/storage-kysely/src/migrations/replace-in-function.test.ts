import { describe, expect, it } from 'vitest';
import { replaceInFunction } from './replace-in-function.js';

const CREATE = `CREATE FUNCTION f(p int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
  RETURN p + 1;
END
$$`;

describe('replaceInFunction', () => {
  it('makes a CREATE OR REPLACE of the function with each passage changed, in order', () => {
    const once = replaceInFunction('0099', CREATE, [['p + 1', 'p + 2']]);
    expect(once).toBe(
      CREATE.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION').replace('p + 1', 'p + 2'),
    );
    // A replaced function can be changed again; a later change sees the earlier one's text.
    expect(
      replaceInFunction('0100', once, [
        ['p + 2', 'p * 2'],
        ['p * 2', 'p * 3'],
      ]),
    ).toContain('RETURN p * 3;');
  });

  it('refuses a passage found no times or more than once, and a text that is not a function', () => {
    expect(() => replaceInFunction('0099', CREATE, [['p + 9', 'x']])).toThrow(
      'migration 0099: a passage to replace occurs 0 times, not once',
    );
    expect(() => replaceInFunction('0099', CREATE, [['$$', 'x']])).toThrow('occurs 2 times, not once');
    expect(() => replaceInFunction('0099', 'CREATE INDEX i ON t (c)', [])).toThrow(
      'migration 0099: the text to replace in is not a CREATE FUNCTION',
    );
  });
});
