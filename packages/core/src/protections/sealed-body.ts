/**
 * Stored idempotent responses are sealed with AES-GCM under a key derived from the caller's
 * `Idempotency-Key` (HKDF-SHA-256), and the database indexes them by a separate SHA-256 digest of
 * that key. Someone holding only the database sees neither the key nor the response.
 */
const encoder = new TextEncoder();

/** The lookup id stored in the database for an `Idempotency-Key` (hex SHA-256, domain-separated). */
export async function idempotencyLookupId(accountId: string, key: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    'SHA-256',
    encoder.encode(`tollgate/idempotency/lookup\u0000${accountId}\u0000${key}`),
  );
  return toHex(new Uint8Array(digest));
}

async function sealingKey(accountId: string, key: string): Promise<CryptoKey> {
  const material = await crypto.subtle.importKey('raw', encoder.encode(key), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: encoder.encode(accountId),
      info: encoder.encode('tollgate/idempotency/seal'),
    },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt', 'decrypt'],
  );
}

/** Seals a response body: base64 of a 12-byte IV followed by the AES-GCM ciphertext. */
export async function sealBody(accountId: string, key: string, plaintext: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv },
    await sealingKey(accountId, key),
    encoder.encode(plaintext),
  );
  const out = new Uint8Array(iv.length + sealed.byteLength);
  out.set(iv);
  out.set(new Uint8Array(sealed), iv.length);
  return toBase64(out);
}

/** Opens a sealed body; throws when the key is not the one it was sealed with. */
export async function openBody(accountId: string, key: string, sealed: string): Promise<string> {
  const bytes = fromBase64(sealed);
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: bytes.subarray(0, 12) },
    await sealingKey(accountId, key),
    bytes.subarray(12),
  );
  return new TextDecoder().decode(plain);
}

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}
