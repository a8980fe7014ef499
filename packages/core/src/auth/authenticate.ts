import { GatewayError } from '../errors/gateway-error.js';
import type { ApiKey, EpochMs, KeyAndAccount, Storage } from '../storage/types.js';
import { hashApiKey, keyEnvOf } from './api-key.js';
import type { AuthCache } from './auth-cache.js';

/**
 * The caller, once authenticated: its key and account, and how many BYOK keys and guardrails the
 * account has (0: the request path needs no further read for them).
 */
export type AuthContext = KeyAndAccount;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The caller's key from `Authorization: Bearer <key>` (every endpoint but the Anthropic wire's):
 * `401 unauthenticated` when the header is missing or not a bearer token.
 */
function readBearerKey(request: Request): string {
  const header = request.headers.get('authorization');
  if (!header)
    throw new GatewayError(
      'unauthenticated',
      'Missing Authorization header; send "Authorization: Bearer <API_KEY>".',
    );
  const token = BEARER.exec(header)?.[1];
  if (!token)
    throw new GatewayError(
      'unauthenticated',
      'The Authorization header is not a bearer token; send "Authorization: Bearer <API_KEY>".',
    );
  return token;
}

/**
 * The spec's Authentication section, in its order: a key is required (`401 unauthenticated`;
 * `readKey` finds it, by default in the bearer header); it must carry a key prefix, checked before
 * any lookup (`401 invalid_api_key`); its SHA-256 hash must match a key (`401 invalid_api_key`); the
 * key must be enabled and, when it expires, not expired at `now` (`401 key_revoked`); its account
 * must not be suspended (`403 account_suspended`, for every key of the account whatever its scope).
 * Scope is checked by the caller (`requireScope`). With `cache`, a key found in it is checked as it
 * was found (see `AuthCache` for how fresh); its expiry is checked against `now` all the same.
 */
export async function authenticate(
  request: Request,
  storage: Storage,
  options: {
    now: EpochMs;
    hashKey?: (key: string) => string | Promise<string>;
    cache?: AuthCache;
    readKey?: (request: Request) => string;
  },
): Promise<AuthContext> {
  const { now, hashKey = hashApiKey, cache, readKey = readBearerKey } = options;
  const token = readKey(request);
  if (keyEnvOf(token) === null) {
    throw new GatewayError(
      'invalid_api_key',
      'The API key is not a gateway key (keys begin "gw_live_" or "gw_test_").',
    );
  }
  const hash = await hashKey(token);
  const cached = cache?.get(hash);
  if (cached) return usable(cached, now);
  const mark = cache?.mark() ?? 0;
  const found = await storage.findApiKeyByHash(hash);
  if (!found) throw new GatewayError('invalid_api_key', 'No API key matches the one provided.');
  cache?.set(hash, found, mark);
  return usable(found, now);
}

/**
 * The caller as one of its keys, known by id rather than by its secret (a batch item runs as the
 * key that created the batch): the same checks as `authenticate` once the key is found, as the key
 * and its account stand at `now`.
 */
export async function authenticateKeyId(
  storage: Pick<Storage, 'findApiKeyById'>,
  accountId: string,
  keyId: string,
  now: EpochMs,
): Promise<AuthContext> {
  const found = await storage.findApiKeyById(accountId, keyId);
  if (!found) throw new GatewayError('invalid_api_key', 'The API key no longer exists.');
  return usable(found, now);
}

function usable(found: AuthContext, now: EpochMs): AuthContext {
  const { key } = found;
  if (key.revoked) throw new GatewayError('key_revoked', 'This API key has been revoked.');
  if (key.disabled) throw new GatewayError('key_revoked', 'This API key is disabled.');
  if (key.expiresAt !== null && key.expiresAt <= now) {
    throw new GatewayError(
      'key_revoked',
      `This API key expired at ${new Date(key.expiresAt).toISOString()}.`,
    );
  }
  if (found.account.suspended)
    throw new GatewayError('account_suspended', 'The account of this API key is suspended.');
  return found;
}

/** `403 wrong_key_scope` unless the key has the scope the route needs. */
export function requireScope(auth: AuthContext, scope: ApiKey['scope']): void {
  if (auth.key.scope === scope) return;
  throw new GatewayError(
    'wrong_key_scope',
    scope === 'provisioning'
      ? 'This endpoint needs a provisioning key; an inference key cannot see or create keys.'
      : 'This endpoint needs an inference key; a provisioning key cannot make model calls.',
  );
}
