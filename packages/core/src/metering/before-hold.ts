import { GatewayError } from '../errors/gateway-error.js';
import type { DeferredRateLimit } from '../protections/rate-limit.js';
import { StorageUnavailableError } from '../storage/guard-storage.js';

/** Writes the record of a refusal before the hold (its code, never charged). */
type RecordRefusal = (refusal: GatewayError) => Promise<void>;

/**
 * The one way a model call ends before its credit hold: refused before its handler ran (rpm, size,
 * validation, a wire the skin refuses) or by the pipeline (a route, the worst case, a hook, the hold
 * itself, a `429` of a hit counted before a cached answer or a replay). The request's rate-limit hit,
 * when still to count, is counted first, so a `429` wins over `error` and is what is recorded and
 * answered; it is counted once whichever path ends the call (`DeferredRateLimit`). A refusal is
 * recorded, never charged; anything else (a bug) is rethrown as it is, for the caller's last resort.
 */
export async function refuseBeforeHold(
  rateLimit: DeferredRateLimit | undefined,
  error: unknown,
  recordRefusal: RecordRefusal,
): Promise<never> {
  const refusal = await rateLimitedOr(rateLimit, error);
  if (refusal instanceof GatewayError) await recordRefusal(refusal);
  throw refusal;
}

/** The `429` if the request's hit, counted now when still to count, is refused; else `error`. */
async function rateLimitedOr(rateLimit: DeferredRateLimit | undefined, error: unknown): Promise<unknown> {
  // A storage that failed the request would only keep its answer waiting for another deadline.
  if (!rateLimit || error instanceof StorageUnavailableError) return error;
  try {
    await rateLimit.count();
    return error;
  } catch (refused) {
    return refused instanceof GatewayError && refused.code === 'rate_limited' ? refused : error;
  }
}
