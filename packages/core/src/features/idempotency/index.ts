import type { CallContext, Feature } from '../../pipeline/feature.js';
import { withIdempotency } from './idempotency.js';

/**
 * Idempotency (`Idempotency-Key`, operations that allow it, not streamed): the call runs under the
 * account's claim on the key, and a completed key replays its stored answer without running it.
 */
export const idempotencyFeature: Feature = {
  name: 'idempotency',
  around(ctx, run) {
    const key = ctx.op.idempotent && !ctx.streams ? ctx.request.headers.get('idempotency-key') : null;
    return key === null ? run() : underClaim(ctx, key, run);
  },
};

/** The call under the account's claim on `key`; a replay answers without a hold. */
async function underClaim(ctx: CallContext, key: string, run: () => Promise<Response>): Promise<Response> {
  // The hit is counted before the claim.
  await ctx.countRateLimit();
  return withIdempotency(ctx.deps, ctx.auth, ctx.requestId, key, {
    run,
    onRefused: (error) => ctx.recordRefusal(error),
    onReplay: () => ctx.recordReplay(),
  });
}
