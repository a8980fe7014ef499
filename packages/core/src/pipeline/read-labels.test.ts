import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.js';
import { readLabels } from './read-labels.js';

const noHeaders: { referer: string | null; title: string | null } = { referer: null, title: null };

function refusal(body: unknown, headers = noHeaders): string {
  try {
    readLabels(body, headers);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_request');
    return (error as GatewayError).message;
  }
  throw new Error('expected a refusal');
}

describe('readLabels', () => {
  it('keeps string labels verbatim and coerces numbers and booleans', () => {
    expect(
      readLabels({ customer: 'acme', 'run.id:7_x-y': 'A b', n: 42, f: 1.5, ok: false }, noHeaders),
    ).toEqual({
      customer: 'acme',
      'run.id:7_x-y': 'A b',
      n: '42',
      f: '1.5',
      ok: 'false',
    });
  });

  it('accepts exactly 16 keys, 64-character keys and 256-character values', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    expect(Object.keys(readLabels(sixteen, noHeaders))).toHaveLength(16);
    expect(readLabels({ ['k'.repeat(64)]: 'v'.repeat(256) }, noHeaders)).toEqual({
      ['k'.repeat(64)]: 'v'.repeat(256),
    });
  });

  it.each([
    [
      '17 keys',
      Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
      /17 keys; at most 16/,
    ],
    ['a 65-character key', { ['k'.repeat(65)]: 'v' }, /1 to 64 characters/],
    ['an empty key', { '': 'v' }, /1 to 64 characters/],
    ['a key with a space', { 'a b': 'v' }, /may only use/],
    ['a key with a slash', { 'a/b': 'v' }, /may only use/],
    ['a 257-character value', { k: 'v'.repeat(257) }, /257 characters; at most 256/],
    ['an object value', { k: { a: 1 } }, /objects, arrays and null are refused/],
    ['an array value', { k: [1] }, /objects, arrays and null are refused/],
    ['a null value', { k: null }, /refused/],
    ['a value with a NUL character', { k: 'a\u0000b' }, /NUL/],
    ['an array as metadata', ['a'], /must be an object/],
    ['a string as metadata', 'a', /must be an object/],
  ])('refuses %s, never truncating', (_name, body, message) => {
    expect(refusal(body)).toMatch(message);
  });

  it('adds referer and title from the headers, outside the 16-key limit', () => {
    const sixteen = Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, 'v']));
    const labels = readLabels(sixteen, { referer: 'https://app.example', title: 'My App' });
    expect(labels.referer).toBe('https://app.example');
    expect(labels.title).toBe('My App');
    expect(Object.keys(labels)).toHaveLength(18);
  });

  it('lets an explicit metadata.referer or metadata.title win over the header', () => {
    expect(
      readLabels({ referer: 'body', title: 'body title' }, { referer: 'header', title: 'header' }),
    ).toEqual({
      referer: 'body',
      title: 'body title',
    });
  });

  it('refuses an over-long header value instead of truncating it', () => {
    expect(refusal(undefined, { referer: 'x'.repeat(300), title: null })).toMatch(/HTTP-Referer/);
  });

  it('keeps a label named __proto__ like any other', () => {
    const labels = readLabels(JSON.parse('{"__proto__":"x","constructor":"y"}'), noHeaders);
    expect(Object.entries(labels)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 'y'],
    ]);
    expect(JSON.parse(JSON.stringify(labels))).toEqual(JSON.parse('{"__proto__":"x","constructor":"y"}'));
  });

  it('returns no labels when there is no metadata and no header', () => {
    expect(readLabels(undefined, noHeaders)).toEqual({});
  });
});
