/**
 * What a sealer seals: each purpose derives its own keys from the server secret, so a body sealed
 * for one can never be opened (or found) as another.
 */
export type SealPurpose = 'idempotency' | 'byok' | 'response-cache' | 'batch';

/**
 * Stored idempotent responses (and BYOK keys, and cached answers) are sealed with AES-256-GCM under
 * a key derived (HKDF-SHA-256) from the server secret, the purpose, the account and the caller's
 * key (`Idempotency-Key`, BYOK key id, request hash), and the database indexes them by an
 * HMAC-SHA-256 of the account and key under a key derived from the same secret.
 * Both need the secret: someone holding only the database can neither find which row belongs to a
 * guessable key (say `1`) nor open any body, however short the keys are.
 */
export interface BodySealer {
  /** The lookup id stored in the database for an `Idempotency-Key` (64 lower-case hex characters). */
  lookupId(accountId: string, key: string): Promise<string>;
  /** Seals a response body: base64 of a 12-byte IV followed by the AES-GCM ciphertext. */
  seal(accountId: string, key: string, plaintext: string): Promise<string>;
  /** Opens a sealed body; rejects when the secret, account or key is not the one it was sealed with. */
  open(accountId: string, key: string, sealed: string): Promise<string>;
}

const encoder = new TextEncoder();

/** A sealer under `secret` (the gateway's server secret, 32 bytes or more) for one purpose. */
export function createBodySealer(secret: Uint8Array, purpose: SealPurpose = 'idempotency'): BodySealer {
  const LOOKUP_INFO = encoder.encode(`tollgate/${purpose}/lookup`);
  const SEAL_SALT = encoder.encode(`tollgate/${purpose}/seal`);
  // Imported once: the secret itself never leaves this closure as bytes again.
  const baseKey = crypto.subtle.importKey('raw', Uint8Array.from(secret), 'HKDF', false, ['deriveKey']);
  const lookupKey = baseKey.then((base) =>
    crypto.subtle.deriveKey(
      { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: LOOKUP_INFO },
      base,
      { name: 'HMAC', hash: 'SHA-256', length: 256 },
      false,
      ['sign'],
    ),
  );
  const sealingKey = async (accountId: string, key: string): Promise<CryptoKey> =>
    crypto.subtle.deriveKey(
      { name: 'HKDF', hash: 'SHA-256', salt: SEAL_SALT, info: scoped(accountId, key) },
      await baseKey,
      { name: 'AES-GCM', length: 256 },
      false,
      ['encrypt', 'decrypt'],
    );

  return {
    async lookupId(accountId, key) {
      const mac = await crypto.subtle.sign('HMAC', await lookupKey, scoped(accountId, key));
      return toHex(new Uint8Array(mac));
    },
    async seal(accountId, key, plaintext) {
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
    },
    async open(accountId, key, sealed) {
      const bytes = fromBase64(sealed);
      const plain = await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: bytes.subarray(0, 12) },
        await sealingKey(accountId, key),
        bytes.subarray(12),
      );
      return new TextDecoder().decode(plain);
    },
  };
}

/** Account and key, unambiguously joined (an account id never holds a NUL). */
function scoped(accountId: string, key: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${accountId}\u0000${key}`);
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
