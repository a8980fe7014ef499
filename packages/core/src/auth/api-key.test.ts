import { describe, expect, it } from 'vitest';
import { displayPrefix, hashApiKey, keyEnvOf, mintApiKey } from './api-key.js';

describe('mintApiKey', () => {
  it('mints gw_live_ + 24 random bytes, base64url-encoded', async () => {
    const minted = await mintApiKey('live');
    expect(minted.key).toMatch(/^gw_live_[A-Za-z0-9_-]{32}$/);
    expect(minted.env).toBe('live');
  });

  it('mints test keys with gw_test_', async () => {
    expect((await mintApiKey('test')).key).toMatch(/^gw_test_[A-Za-z0-9_-]{32}$/);
  });

  it('returns the SHA-256 hex of the key and a short displayable prefix', async () => {
    const minted = await mintApiKey('live');
    expect(minted.hash).toBe(await hashApiKey(minted.key));
    expect(minted.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(minted.prefix).toBe(minted.key.slice(0, 14));
    expect(minted.key.startsWith(minted.prefix)).toBe(true);
  });

  it('never repeats', async () => {
    const keys = await Promise.all(Array.from({ length: 50 }, () => mintApiKey('live')));
    expect(new Set(keys.map((k) => k.key)).size).toBe(50);
  });
});

describe('hashApiKey', () => {
  it('is SHA-256 in lower-case hex', async () => {
    expect(await hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('keyEnvOf / displayPrefix', () => {
  it.each([
    ['gw_live_abc', 'live'],
    ['gw_test_abc', 'test'],
    ['sk-abc', null],
    ['gw_prod_abc', null],
    ['GW_LIVE_abc', null],
  ])('%s → %s', (token, env) => {
    expect(keyEnvOf(token)).toBe(env);
  });

  it('keeps the environment prefix and six secret characters', () => {
    expect(displayPrefix('gw_test_ABCDEFGHIJ')).toBe('gw_test_ABCDEF');
  });
});
