import { describe, expect, it } from 'vitest';
import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { DeferredRateLimit } from '../protections/rate-limit.js';
import { StorageUnavailableError } from '../storage/guard-storage.js';
import { refuseBeforeHold } from './before-hold.js';

/** A deferred hit on a storage whose rate-limit window admits `allowed` more hits; counts the calls. */
function deferredHit(allowed: number) {
  const hits = { count: 0 };
  const storage = {
    hitRateLimit: async () => {
      hits.count++;
      return hits.count <= allowed ? { allowed: true } : { allowed: false, retryAfterMs: 1_500 };
    },
  };
  const deps = { storage, now: () => 0, defaultRateLimitRpm: 1 } as unknown as GatewayDeps;
  const auth = {
    key: { id: 'key_1', rateLimitRpm: null },
    account: { defaultRpm: null },
  } as unknown as AuthContext;
  return { rateLimit: new DeferredRateLimit(deps, auth), hits };
}

/** Runs `refuseBeforeHold` and returns what it threw and what it recorded. */
async function refuse(rateLimit: DeferredRateLimit | undefined, error: unknown) {
  const recorded: GatewayError[] = [];
  const thrown = await refuseBeforeHold(rateLimit, error, async (refusal) => {
    recorded.push(refusal);
  }).catch((e: unknown) => e);
  return { thrown, recorded };
}

const badRequest = new GatewayError('invalid_request', 'the body is not valid');

describe('refuseBeforeHold', () => {
  it('counts a hit still to count; a refused one is the 429 answered and recorded', async () => {
    const { rateLimit, hits } = deferredHit(0);
    const { thrown, recorded } = await refuse(rateLimit, badRequest);
    expect(hits.count).toBe(1);
    expect(thrown).toBeInstanceOf(GatewayError);
    expect((thrown as GatewayError).code).toBe('rate_limited');
    expect((thrown as GatewayError).headers).toMatchObject({ 'Retry-After': '2' });
    expect(recorded).toEqual([thrown]);
  });

  it('an admitted hit leaves the refusal as it is, recorded once', async () => {
    const { rateLimit, hits } = deferredHit(1);
    const { thrown, recorded } = await refuse(rateLimit, badRequest);
    expect(hits.count).toBe(1);
    expect(thrown).toBe(badRequest);
    expect(recorded).toEqual([badRequest]);
  });

  it('a hit counted already, or handed to the hold, is not counted again', async () => {
    const counted = deferredHit(1);
    await counted.rateLimit.count();
    expect((await refuse(counted.rateLimit, badRequest)).thrown).toBe(badRequest);
    expect(counted.hits.count).toBe(1);

    const held = deferredHit(0);
    expect(held.rateLimit.takeForHold()).not.toBeNull();
    expect((await refuse(held.rateLimit, badRequest)).thrown).toBe(badRequest);
    expect(held.hits.count).toBe(0);
  });

  it('a storage that failed is answered at once: no hit is counted on it', async () => {
    const { rateLimit, hits } = deferredHit(0);
    const unavailable = new StorageUnavailableError(null);
    const { thrown, recorded } = await refuse(rateLimit, unavailable);
    expect(hits.count).toBe(0);
    expect(thrown).toBe(unavailable);
    expect(recorded).toEqual([unavailable]);
  });

  it('anything but a refusal is rethrown unrecorded, after the 429 had its chance', async () => {
    const bug = new TypeError('not a refusal');
    expect(await refuse(deferredHit(1).rateLimit, bug)).toEqual({ thrown: bug, recorded: [] });
    const limited = await refuse(deferredHit(0).rateLimit, bug);
    expect((limited.thrown as GatewayError).code).toBe('rate_limited');
    expect(limited.recorded).toEqual([limited.thrown]);
    expect(await refuse(undefined, bug)).toEqual({ thrown: bug, recorded: [] });
  });
});
