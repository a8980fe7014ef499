const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A new opaque id such as `req_k3x9…`: the prefix, an underscore, then 20 base-36 characters
 * (about 103 bits of randomness from `crypto.getRandomValues`).
 */
export function newId(prefix: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  let out = `${prefix}_`;
  for (const byte of bytes) out += ALPHABET[byte % 36];
  return out;
}
