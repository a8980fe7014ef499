import { mintApiKey } from '../../auth/api-key.js';
import type { LimitReset } from '../../metering/limit-windows.js';
import type { ApiKey, KeyEnv, KeyScope, Micros, Storage } from '../../storage/types.js';

export interface CreateKeyInput {
  accountId: string;
  name: string;
  scope: KeyScope;
  env: KeyEnv;
  projectId?: string | null;
  spendLimitMicros?: Micros | null;
  limitReset?: LimitReset | null;
  rateLimitRpm?: number | null;
}

/**
 * Mints a key and stores its hash. The returned `secret` is the only time the full key exists
 * outside the caller's hands: it is not stored and must not be logged.
 */
export async function createApiKey(
  storage: Storage,
  input: CreateKeyInput,
): Promise<{ key: ApiKey; secret: string }> {
  const minted = await mintApiKey(input.env);
  const key = await storage.createApiKey({ ...input, hash: minted.hash, prefix: minted.prefix });
  return { key, secret: minted.key };
}
