import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { RateLimitInput } from '../storage/metering-types.js';

const MINUTE_MS = 60_000;

/** The requests-per-minute limit of a key: its own, else its account's default, else the deployment's. */
export function rateLimitOf(
  auth: AuthContext,
  deploymentDefault: number,
): { rpm: number; source: 'key' | 'account' | 'default' } {
  if (auth.key.rateLimitRpm !== null) return { rpm: auth.key.rateLimitRpm, source: 'key' };
  if (auth.account.defaultRpm !== null) return { rpm: auth.account.defaultRpm, source: 'account' };
  return { rpm: deploymentDefault, source: 'default' };
}

/** The hit an authenticated inference request counts against its key's window. */
function rateLimitHitOf(deps: GatewayDeps, auth: AuthContext): RateLimitInput {
  return {
    subject: `key:${auth.key.id}`,
    limit: rateLimitOf(auth, deps.defaultRateLimitRpm).rpm,
    windowMs: MINUTE_MS,
    now: deps.now(),
  };
}

/** The `429` of a refused hit: `Retry-After` in whole seconds, at least 1. */
export function rateLimitRefusal(rpm: number, retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError(
    'rate_limited',
    `This key's limit of ${rpm} requests per minute is used up; retry in ${seconds} s.`,
    { 'Retry-After': String(seconds) },
  );
}

/**
 * The per-key rate limit (spec Authentication rule 7), enforced before anything reaches a provider:
 * every authenticated request to an inference endpoint counts one hit, including those the
 * pre-flight later refuses. Refused with `429 rate_limited` and an authoritative `Retry-After` (whole
 * seconds until a request would be admitted). The counter lives in storage, so it holds across
 * processes.
 *
 * One value per request decides when its hit is counted: up front (`count`, `handle-request.ts`
 * does so for a model call that arrives while others are in flight), else with the request's credit
 * hold (`reserveCredit` takes it, in the same round trip on Postgres; a refused hit holds nothing).
 * A request that ends before any hold (refused, answered from the cache, replayed) counts it on its
 * own before that answer (`metering/before-hold.ts`). Either way it is counted exactly once, before
 * anything reaches a provider, and a `429` wins over every refusal that would otherwise answer the
 * request.
 */
export class DeferredRateLimit {
  readonly #deps: GatewayDeps;
  readonly #hit: RateLimitInput;
  /** Null until counted or handed to the hold; then the count (rejecting with the `429`). */
  #counted: Promise<void> | null = null;

  constructor(deps: GatewayDeps, auth: AuthContext) {
    this.#deps = deps;
    this.#hit = rateLimitHitOf(deps, auth);
  }

  /** The hit for the hold to count first; null when it was counted already. */
  takeForHold(): RateLimitInput | null {
    if (this.#counted) return null;
    this.#counted = Promise.resolve();
    return this.#hit;
  }

  /** Counts the hit now unless it was counted or handed to the hold; throws the `429` if refused. */
  count(): Promise<void> {
    this.#counted ??= this.#deps.storage.hitRateLimit(this.#hit).then((hit) => {
      if (!hit.allowed) throw rateLimitRefusal(this.#hit.limit, hit.retryAfterMs);
    });
    return this.#counted;
  }
}
