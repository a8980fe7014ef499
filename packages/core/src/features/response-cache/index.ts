import type { Feature } from '../../pipeline/feature.js';
import { answerFromCache } from './answer-from-cache.js';
import { type CacheRequest, readCacheRequest } from './cache-request.js';
import { findCachedAnswer } from './cached-answer.js';
import { keepAnswer } from './keep-answer.js';

/**
 * The response cache (cacheable operations, opted in by `X-Gateway-Cache` or a preset): a hit
 * short-circuits before the hold (nothing held or charged; the answer checked by the other hooks
 * first), a miss is marked `X-Gateway-Cache: MISS`, and a settled success is kept — a stream's
 * chunks watched and assembled by the operation's `stream.assemble`.
 */
export const responseCacheFeature: Feature = {
  name: 'response-cache',
  open(ctx) {
    const { op, deps } = ctx;
    if (!op.cacheable) return null;
    let cache: CacheRequest | null = null;
    const kept: unknown[] = [];
    return {
      async beforeHold(planned) {
        // A call a hook keeps fresh (a web-plugin request: its results and fee) is never cached.
        if (!planned.cacheable) return null;
        cache = await readCacheRequest(ctx.request.headers, op.endpoint, planned.body, deps.hashKey);
        if (!cache) return null;
        const cached = await findCachedAnswer(deps, ctx.auth.account.id, cache, ctx.record.createdAt);
        if (!cached) return null;
        return {
          answer: cached.answer,
          respond: () => answerFromCache(op, ctx.record, ctx, planned, cached, ctx.streams),
        };
      },
      watch: () =>
        cache && op.stream?.assemble
          ? {
              see: (chunk) => {
                kept.push(chunk);
                return null;
              },
            }
          : null,
      answered(response) {
        if (cache) response.headers.set('X-Gateway-Cache', 'MISS');
      },
      async settled({ call, route, usage, finishReason, answer }) {
        if (!cache) return;
        const assemble = op.stream?.assemble;
        const whole = answer ?? (assemble ? assemble(kept, route.model.id, usage) : null);
        if (whole) await keepAnswer(call, cache, whole, finishReason);
      },
    };
  },
};
