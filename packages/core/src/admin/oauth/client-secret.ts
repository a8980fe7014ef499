import { randomBase64url } from '../../base64url.js';

/** What a client secret begins with, so a leaked one is recognisable (and never taken for an API key). */
const CLIENT_SECRET_PREFIX = 'gw_cs_';

/** A new client secret: `gw_cs_` + 32 random bytes in base64url (43 characters). Shown once, stored hashed. */
export function newClientSecret(): string {
  return `${CLIENT_SECRET_PREFIX}${randomBase64url(32)}`;
}

/**
 * Whether two strings are equal, in time that depends on their length only (hex digests of one
 * length, in practice), so a caller cannot find a secret's hash by timing comparisons.
 */
export function equalInConstantTime(a: string, b: string): boolean {
  let difference = a.length ^ b.length;
  const length = Math.max(a.length, b.length);
  for (let i = 0; i < length; i++) difference |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return difference === 0;
}
