const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const ID_LENGTH = 20;

/**
 * Random bytes drawn from `crypto.getRandomValues` a few kilobytes at a time: one call per ~200 ids
 * instead of one per id, which showed in profiles of the request path (every request mints several
 * ids). Each byte is used once. Ids are identifiers, not secrets (API keys are minted apart).
 */
const pool = new Uint8Array(ID_LENGTH * 200);
let used = pool.length;

/**
 * A new opaque id such as `req_k3x9…`: the prefix, an underscore, then 20 base-36 characters
 * (about 103 bits of randomness from `crypto.getRandomValues`).
 */
export function newId(prefix: string): string {
  if (used + ID_LENGTH > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let out = `${prefix}_`;
  for (let i = used; i < used + ID_LENGTH; i++) out += ALPHABET[pool[i]! % 36];
  used += ID_LENGTH;
  return out;
}
