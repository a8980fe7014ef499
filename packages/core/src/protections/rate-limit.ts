import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';

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

/**
 * The per-key rate limit (spec Authentication rule 7), enforced before anything reaches a provider:
 * every authenticated request to an inference endpoint counts, including those the pre-flight later
 * refuses. Refused with `429 rate_limited` and an authoritative `Retry-After` (whole seconds until a
 * request would be admitted). The counter lives in storage, so it holds across processes.
 */
export async function enforceRateLimit(deps: GatewayDeps, auth: AuthContext): Promise<void> {
  const { rpm } = rateLimitOf(auth, deps.defaultRateLimitRpm);
  const hit = await deps.storage.hitRateLimit({
    subject: `key:${auth.key.id}`,
    limit: rpm,
    windowMs: MINUTE_MS,
    now: deps.now(),
  });
  if (hit.allowed) return;
  const seconds = Math.max(1, Math.ceil(hit.retryAfterMs / 1000));
  throw new GatewayError(
    'rate_limited',
    `This key's limit of ${rpm} requests per minute is used up; retry in ${seconds} s.`,
    {
      'Retry-After': String(seconds),
    },
  );
}
