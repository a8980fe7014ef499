import { type MeteredUsage, meteredUsage } from '../../metering/usage.js';
import type { BodySealer } from '../../protections/sealed-body.js';
import type { Micros, Storage } from '../../storage/types.js';
import type { GatewayLogger } from '../../telemetry/gateway-logger.js';
import type { CacheRequest } from './cache-request.js';
import type { RecentAnswers } from './recent-answers.js';

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

/** What reading and writing the cache takes (the gateway's deps have it all). */
interface CacheDeps {
  storage: Pick<Storage, 'getCachedResponse' | 'putCachedResponse'>;
  responseCacheSealer: BodySealer;
  recentAnswers: RecentAnswers<CachedAnswer>;
  logger: GatewayLogger;
}

/**
 * The account's live cached answer for this request, or `null`: from this process's recent answers
 * when it has it, else from storage (then kept at hand). An entry that cannot be opened (sealed under
 * another server secret, or damaged) counts as a miss.
 */
export async function findCachedAnswer(
  deps: CacheDeps,
  accountId: string,
  cache: CacheRequest,
  now: number,
): Promise<CachedAnswer | null> {
  const recent = deps.recentAnswers.get(accountId, cache.key, now);
  if (recent) return recent;
  const sealer = deps.responseCacheSealer;
  const lookupId = await sealer.lookupId(accountId, cache.key);
  const entry = await deps.storage.getCachedResponse(accountId, lookupId, now);
  if (!entry) return null;
  try {
    const text = await sealer.open(accountId, cache.key, entry.sealedBody);
    const answer = JSON.parse(text) as CachedAnswer;
    // An entry sealed by an earlier version has no unit lines: read as none.
    answer.usage = meteredUsage(answer.usage);
    deps.recentAnswers.set(accountId, cache.key, answer, entry.expiresAt, text.length);
    return answer;
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
  deps: CacheDeps,
  accountId: string,
  cache: CacheRequest,
  cached: CachedAnswer,
  now: number,
): Promise<void> {
  const sealer = deps.responseCacheSealer;
  const text = JSON.stringify(cached);
  const expiresAt = now + cache.ttlMs;
  try {
    await deps.storage.putCachedResponse({
      accountId,
      lookupId: await sealer.lookupId(accountId, cache.key),
      sealedBody: await sealer.seal(accountId, cache.key, text),
      createdAt: now,
      expiresAt,
    });
    deps.recentAnswers.set(accountId, cache.key, cached, expiresAt, text.length);
  } catch (error) {
    deps.logger.warn(
      { err: { name: (error as Error)?.name } },
      'storing an answer in the response cache failed',
    );
  }
}
