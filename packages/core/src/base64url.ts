/** Bytes as unpadded base64url (RFC 4648 §5), the alphabet of API keys, OAuth codes and secrets, and PKCE challenges. */
export function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** `byteCount` random bytes from `crypto.getRandomValues`, as unpadded base64url. */
export function randomBase64url(byteCount: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(byteCount)));
}
