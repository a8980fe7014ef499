/** The fewest bytes a server secret may have (256 bits). */
const MIN_SERVER_SECRET_BYTES = 32;

let processSecret: Uint8Array | undefined;

/**
 * The server secret as bytes: a string is taken as its UTF-8 bytes (so a hex or base64 secret from
 * the environment is used as written), bytes as they are. Rejects a secret shorter than 32 bytes.
 * Without one: a random secret made once per process and kept only in memory.
 */
export function serverSecretBytes(secret: Uint8Array | string | undefined): Uint8Array {
  if (secret === undefined) {
    processSecret ??= crypto.getRandomValues(new Uint8Array(MIN_SERVER_SECRET_BYTES));
    return processSecret;
  }
  const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : Uint8Array.from(secret);
  if (bytes.length < MIN_SERVER_SECRET_BYTES) {
    throw new RangeError(
      `serverSecret must be at least ${MIN_SERVER_SECRET_BYTES} bytes (got ${bytes.length}); ` +
        'use 32 random bytes, or a string of 64 hex characters',
    );
  }
  return bytes;
}
