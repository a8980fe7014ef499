import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import { formatMicrosAsUsd } from '../money/micros.js';
import { type DeferredRateLimit, rateLimitRefusal } from '../protections/rate-limit.js';
import { StorageUnavailableError } from '../storage/guard-storage.js';
import type { CreditReservation, RequestRecord, ReserveCreditResult } from '../storage/metering-types.js';
import type { EpochMs, Storage } from '../storage/types.js';
import type { WorstCase } from './estimate-worst-case.js';
import { limitResetsAt } from './limit-windows.js';

/**
 * The pre-flight (spec rule 1 of chat completions): atomically hold the worst case against the
 * balance, the key's cap (of its lifetime or its UTC window) and the account's monthly ceiling, or refuse with the matching
 * 402. Nothing has been sent upstream when this throws. With the hold, the request's record is
 * written as it stands (status `in_progress`), so a process that dies before the settle still
 * leaves the request on record; the settle completes it. With `rateLimit` (the request's deferred
 * hit, `protections/rate-limit.ts`), the hold decides: a hit still to count is counted first, in the
 * same round trip, and a refused one is the `429`; one counted already is left alone.
 */
export async function reserveCredit(
  storage: Storage,
  input: {
    auth: AuthContext;
    requestId: string;
    worstCase: WorstCase;
    now: EpochMs;
    ttlMs: number;
    record: RequestRecord;
    rateLimit?: DeferredRateLimit;
  },
): Promise<CreditReservation> {
  const hit = input.rateLimit?.takeForHold() ?? null;
  let result: ReserveCreditResult;
  try {
    result = await storage.reserveCredit({
      accountId: input.auth.account.id,
      keyId: input.auth.key.id,
      requestId: input.requestId,
      amountMicros: input.worstCase.micros,
      now: input.now,
      ttlMs: input.ttlMs,
      record: { ...input.record, status: 'in_progress', httpStatus: 0 },
      ...(hit ? { rateLimit: hit } : {}),
    });
  } catch (error) {
    if (error instanceof StorageUnavailableError && error.late) throw new HoldNotConfirmed(error);
    throw error;
  }
  if (result.ok) return result.reservation;
  if (result.reason === 'rate_limited') {
    if (!hit) throw new Error('the storage refused a rate-limit hit the reserve did not carry');
    throw rateLimitRefusal(hit.limit, result.retryAfterMs);
  }
  const estimate = `$${formatMicrosAsUsd(input.worstCase.micros)}`;
  const available = `$${formatMicrosAsUsd(Math.max(0, result.availableMicros))}`;
  switch (result.reason) {
    case 'insufficient_credit':
      throw new GatewayError(
        'insufficient_credit',
        `Insufficient credit: the balance is $${formatMicrosAsUsd(result.balanceMicros)} (${available} available after requests in flight) and this request may cost up to ${estimate}. Nothing was sent upstream.`,
      );
    case 'key_limit_exceeded': {
      const reset = input.auth.key.limitReset;
      if (reset === null) {
        throw new GatewayError(
          'key_limit_exceeded',
          `This key's spend limit leaves ${available} and this request may cost up to ${estimate}. Nothing was sent upstream.`,
        );
      }
      // The window and when it ends, so the caller knows when to try again.
      const resetsAt = limitResetsAt(reset, input.now);
      throw new GatewayError(
        'key_limit_exceeded',
        `This key's ${reset} spend limit leaves ${available} until it resets at ${resetsAt}, and this request may cost up to ${estimate}. Nothing was sent upstream.`,
      );
    }
    case 'monthly_limit_exceeded':
      throw new GatewayError(
        'monthly_limit_exceeded',
        `The account's monthly limit leaves ${available} this month and this request may cost up to ${estimate}. Nothing was sent upstream.`,
      );
  }
}

/**
 * The hold's deadline passed: the request is refused `503 storage_unavailable`, but the hold may
 * still land. `hold` says, once the storage answers, what it holds (to be settled, uncharged) or
 * `null` when nothing was held.
 */
export class HoldNotConfirmed extends StorageUnavailableError {
  readonly hold: Promise<CreditReservation | null>;

  constructor(timedOut: StorageUnavailableError) {
    super(timedOut.late, { cause: timedOut.cause });
    this.hold = (timedOut.late ?? Promise.resolve(null)).then((late) => {
      const result = late as ReserveCreditResult | undefined;
      return result?.ok ? result.reservation : null;
    });
  }
}
