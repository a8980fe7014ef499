import { randomBase64url } from '../base64url.js';
import type { KeyEnv } from '../storage/types.js';

export const KEY_PREFIXES = { live: 'gw_live_', test: 'gw_test_' } as const satisfies Record<KeyEnv, string>;

/** How many characters of the secret part the displayable `prefix` keeps. */
const PREFIX_SECRET_CHARS = 6;

export interface MintedKey {
  /** The full secret; shown to the caller once and never stored. */
  key: string;
  /** Lower-case hex SHA-256 of `key`: the only form that is stored. */
  hash: string;
  /** Safe to display: the environment prefix plus the first few secret characters. */
  prefix: string;
  env: KeyEnv;
}

/** Mints a key: `gw_live_`/`gw_test_` + 24 random bytes, base64url-encoded (32 characters). */
export async function mintApiKey(env: KeyEnv): Promise<MintedKey> {
  const secret = randomBase64url(24);
  const key = `${KEY_PREFIXES[env]}${secret}`;
  return { key, hash: await hashApiKey(key), prefix: displayPrefix(key), env };
}

/** The environment a token claims by its prefix, or `null` when it does not look like a key. */
export function keyEnvOf(token: string): KeyEnv | null {
  if (token.startsWith(KEY_PREFIXES.live)) return 'live';
  if (token.startsWith(KEY_PREFIXES.test)) return 'test';
  return null;
}

export function displayPrefix(key: string): string {
  const env = keyEnvOf(key);
  const head = env ? KEY_PREFIXES[env].length : 0;
  return key.slice(0, head + PREFIX_SECRET_CHARS);
}

/** Lower-case hex SHA-256 of a key string (Web Crypto, so it runs on any runtime). */
export async function hashApiKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
