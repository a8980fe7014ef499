/**
 * Test support for the sealing tests (unit and e2e): what someone holding only the database could
 * try before the server secret was mixed in. The lookup id was SHA-256 of the account and key, and
 * the sealing key came from HKDF over the key alone, so a short `Idempotency-Key` fell to a brute
 * force of the digest in milliseconds. The tests show both fail now.
 */
export const keyOnly = {
  async lookupId(accountId: string, key: string): Promise<string> {
    const digest = await crypto.subtle.digest(
      'SHA-256',
      new TextEncoder().encode(`tollgate/idempotency/lookup\u0000${accountId}\u0000${key}`),
    );
    return Buffer.from(digest).toString('hex');
  },
  async open(accountId: string, key: string, sealed: string): Promise<string> {
    const enc = new TextEncoder();
    const material = await crypto.subtle.importKey('raw', enc.encode(key), 'HKDF', false, ['deriveKey']);
    const aes = await crypto.subtle.deriveKey(
      {
        name: 'HKDF',
        hash: 'SHA-256',
        salt: enc.encode(accountId),
        info: enc.encode('tollgate/idempotency/seal'),
      },
      material,
      { name: 'AES-GCM', length: 256 },
      false,
      ['decrypt'],
    );
    const bytes = Buffer.from(sealed, 'base64');
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: bytes.subarray(0, 12) },
      aes,
      bytes.subarray(12),
    );
    return new TextDecoder().decode(plain);
  },
};
