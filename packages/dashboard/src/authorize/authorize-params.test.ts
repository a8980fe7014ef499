import { describe, expect, it } from 'vitest';
import {
  denyRedirectUrl,
  isAuthorizeRequest,
  isRedirectTo,
  parseAuthorizeParams,
  parseSpendLimit,
} from './authorize-params.js';

const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
const query = (extra: string) =>
  `?client_id=oc_1&redirect_uri=${encodeURIComponent('https://app.example/cb')}&code_challenge=${CHALLENGE}${extra}`;

describe('authorize-params', () => {
  it('isAuthorizeRequest - only when the query has client_id', () => {
    expect(isAuthorizeRequest('?client_id=oc_1')).toBe(true);
    expect(isAuthorizeRequest('')).toBe(false);
  });

  it('parseAuthorizeParams - reads every param', () => {
    const parsed = parseAuthorizeParams(query('&code_challenge_method=S256&state=xyz&spend_limit_usd=2.5'));
    expect(parsed).toEqual({
      ok: true,
      params: {
        clientId: 'oc_1',
        redirectUri: 'https://app.example/cb',
        codeChallenge: CHALLENGE,
        state: 'xyz',
        spendLimitUsd: '2.5',
      },
    });
  });

  it('parseAuthorizeParams - refuses a method other than S256 and a missing challenge', () => {
    expect(parseAuthorizeParams(query('&code_challenge_method=plain')).ok).toBe(false);
    expect(parseAuthorizeParams(query('')).ok).toBe(false);
    expect(parseAuthorizeParams('?client_id=oc_1&redirect_uri=x&code_challenge_method=S256').ok).toBe(false);
  });

  it('denyRedirectUrl - adds error and state with "?" or "&" as the URI needs', () => {
    expect(denyRedirectUrl('https://app.example/cb', 'a b')).toBe(
      'https://app.example/cb?error=access_denied&state=a+b',
    );
    expect(denyRedirectUrl('https://app.example/cb?x=1', undefined)).toBe(
      'https://app.example/cb?x=1&error=access_denied',
    );
  });

  it('parseSpendLimit - empty is none, a positive number is a limit, anything else is refused', () => {
    expect(parseSpendLimit(' ')).toEqual({ ok: true, value: undefined });
    expect(parseSpendLimit('2.5')).toEqual({ ok: true, value: 2.5 });
    expect(parseSpendLimit('0').ok).toBe(false);
    expect(parseSpendLimit('abc').ok).toBe(false);
  });

  it('denyRedirectUrl - refuses a script URL', () => {
    expect(() => denyRedirectUrl('javascript:alert(1)', undefined)).toThrow();
  });

  it('isRedirectTo - accepts the registered URI with a query added, refuses anything else', () => {
    expect(isRedirectTo('https://app.example/cb?code=c&state=s', 'https://app.example/cb')).toBe(true);
    expect(isRedirectTo('com.example.app:/cb?code=c', 'com.example.app:/cb')).toBe(true);
    expect(isRedirectTo('https://evil.example/cb?code=c', 'https://app.example/cb')).toBe(false);
    expect(isRedirectTo('https://app.example/other?code=c', 'https://app.example/cb')).toBe(false);
    expect(isRedirectTo('javascript:alert(1)', 'javascript:alert(1)')).toBe(false);
  });
});
