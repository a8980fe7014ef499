import type { GatewayDeps } from '../gateway-deps.js';
import type { MeteredUsage } from '../metering/usage.js';
import type { Micros } from '../storage/types.js';
import type { CacheRequest } from './cache-request.js';

/** What the cache keeps of an answer: the caller's JSON body and what the original call came to. */
export interface CachedAnswer {
  /** The answer as the caller got it, without the `gateway` object. */
  answer: Record<string, unknown>;
  model: string;
  provider: string;
  usage: MeteredUsage;
  finishReason: string | null;
  /** What the original call cost (before any waiver): a hit's `saved_usd`. */
  costMicros: Micros;
}

/**
 * The account's live cached answer for this request, or `null`. An entry that cannot be opened
 * (sealed under another server secret, or damaged) counts as a miss.
 */
export async function findCachedAnswer(
  deps: Pick<GatewayDeps, 'storage' | 'responseCacheSealer' | 'logger'>,
  accountId: string,
  cache: CacheRequest,
  now: number,
): Promise<CachedAnswer | null> {
  const sealer = deps.responseCacheSealer;
  const entry = await deps.storage.getCachedResponse(
    accountId,
    await sealer.lookupId(accountId, cache.key),
    now,
  );
  if (!entry) return null;
  try {
    return JSON.parse(await sealer.open(accountId, cache.key, entry.sealedBody)) as CachedAnswer;
  } catch (error) {
    deps.logger.warn(
      { err: { name: (error as Error)?.name } },
      'a cached answer could not be opened; treated as a miss',
    );
    return null;
  }
}

/**
 * Keeps an answer for `cache.ttlMs`, sealed under a key derived from the server secret, the account
 * and the request, replacing any entry of the same request (one upsert: a concurrent miss of the same
 * request leaves one whole entry, never a mix). A failed write is logged and otherwise ignored: the
 * caller already has the answer.
 */
export async function storeCachedAnswer(
  deps: Pick<GatewayDeps, 'storage' | 'responseCacheSealer' | 'logger'>,
  accountId: string,
  cache: CacheRequest,
  cached: CachedAnswer,
  now: number,
): Promise<void> {
  const sealer = deps.responseCacheSealer;
  try {
    await deps.storage.putCachedResponse({
      accountId,
      lookupId: await sealer.lookupId(accountId, cache.key),
      sealedBody: await sealer.seal(accountId, cache.key, JSON.stringify(cached)),
      createdAt: now,
      expiresAt: now + cache.ttlMs,
    });
  } catch (error) {
    deps.logger.warn(
      { err: { name: (error as Error)?.name } },
      'storing an answer in the response cache failed',
    );
  }
}
