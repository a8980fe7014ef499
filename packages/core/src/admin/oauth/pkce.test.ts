import { describe, expect, it } from 'vitest';
import { equalInConstantTime } from './client-secret.js';
import { S256_CODE_CHALLENGE, s256CodeChallenge, verifyS256 } from './pkce.js';

// RFC 7636 Appendix B.
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

describe('PKCE S256', () => {
  it('s256CodeChallenge - gives the challenge of RFC 7636 Appendix B', async () => {
    expect(await s256CodeChallenge(VERIFIER)).toBe(CHALLENGE);
    expect(CHALLENGE).toMatch(S256_CODE_CHALLENGE);
  });

  it('verifyS256 - accepts the Appendix B pair and refuses any other verifier', async () => {
    expect(await verifyS256(VERIFIER, CHALLENGE)).toBe(true);
    expect(await verifyS256(`${VERIFIER.slice(0, -1)}l`, CHALLENGE)).toBe(false);
    expect(await verifyS256(VERIFIER, `${CHALLENGE.slice(0, -1)}N`)).toBe(false);
  });

  it.each([
    ['42 characters (too short)', 'a'.repeat(42)],
    ['129 characters (too long)', 'a'.repeat(129)],
    ['a character outside [A-Za-z0-9-._~]', `${'a'.repeat(42)}+`],
    ['a space', `${'a'.repeat(42)} `],
  ])('verifyS256 - refuses a malformed verifier: %s, even against its own challenge', async (_, verifier) => {
    expect(await verifyS256(verifier, await s256CodeChallenge(verifier))).toBe(false);
  });

  it('verifyS256 - accepts verifiers of 43 and 128 characters using every allowed character', async () => {
    for (const verifier of ['A-._~'.padEnd(43, 'z'), 'aZ09-._~'.repeat(16)]) {
      expect(await verifyS256(verifier, await s256CodeChallenge(verifier))).toBe(true);
    }
  });

  it('equalInConstantTime - compares whole strings, lengths included', () => {
    expect(equalInConstantTime('abc', 'abc')).toBe(true);
    expect(equalInConstantTime('abc', 'abd')).toBe(false);
    expect(equalInConstantTime('abc', 'abcd')).toBe(false);
    expect(equalInConstantTime('', '')).toBe(true);
  });
});
