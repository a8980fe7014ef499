/** Bytes as padded base64 (RFC 4648 §4), e.g. an image in a `data:` URL or an embedding's floats. */
export function base64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Bytes as unpadded base64url (RFC 4648 §5), the alphabet of API keys, OAuth codes and secrets, and PKCE challenges. */
export function base64url(bytes: Uint8Array): string {
  return base64(bytes).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** `byteCount` random bytes from `crypto.getRandomValues`, as unpadded base64url. */
export function randomBase64url(byteCount: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(byteCount)));
}
