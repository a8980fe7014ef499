import { base64url } from '../../base64url.js';
import { equalInConstantTime } from './client-secret.js';

/** A code verifier (RFC 7636 §4.1): 43 to 128 characters of `[A-Za-z0-9-._~]`. */
const CODE_VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/;

/** An S256 code challenge: the base64url SHA-256 of a verifier, 32 bytes, so 43 characters unpadded. */
export const S256_CODE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

/** `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2). */
export async function s256CodeChallenge(codeVerifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(codeVerifier));
  return base64url(new Uint8Array(digest));
}

/**
 * Whether `codeVerifier` is well formed and its S256 challenge is `codeChallenge` (RFC 7636 §4.6),
 * compared in constant time. A malformed verifier never verifies.
 */
export async function verifyS256(codeVerifier: string, codeChallenge: string): Promise<boolean> {
  if (!CODE_VERIFIER.test(codeVerifier)) return false;
  return equalInConstantTime(await s256CodeChallenge(codeVerifier), codeChallenge);
}
