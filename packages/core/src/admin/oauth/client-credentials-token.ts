import { KEY_PREFIXES } from '../../auth/api-key.js';
import { base64url } from '../../base64url.js';
import type { EpochMs } from '../../storage/types.js';

const encoder = new TextEncoder();

/**
 * The access token a `client_credentials` grant hands out for a key of `clientId` expiring at
 * `expiresAt`: `gw_live_` + the first 24 bytes of HMAC-SHA-256 under the client secret, in
 * base64url (the shape of any minted key). Only the token's hash is stored, yet a client that asks
 * again while that key has most of its life left gets the same token back, recomputed from the
 * secret it presents, instead of a new key per call. Nobody without the secret can compute it, and
 * the secret could ask for a token anyway.
 */
export async function clientCredentialsToken(
  clientSecret: string,
  clientId: string,
  expiresAt: EpochMs,
): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    encoder.encode(clientSecret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const message = encoder.encode(`tollgate/client_credentials\u0000${clientId}\u0000${expiresAt}`);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  return `${KEY_PREFIXES.live}${base64url(mac.subarray(0, 24))}`;
}
