import type { EpochMs, Storage } from '../storage/types.js';
import type { GatewayLogger } from '../telemetry/gateway-logger.js';

/** Why `/healthz` says 503: fixed strings, never a driver's message. */
export const HEALTH_REASONS = ['storage cannot write', 'storage unreachable'] as const;
export type HealthReason = (typeof HEALTH_REASONS)[number];

export type HealthResult = { status: 'ok' } | { status: 'unavailable'; reason: HealthReason };

export interface HealthCheckOptions {
  /** How long one probe's answer is reused (default 1000 ms), so a burst of checks costs one write. */
  cacheMs?: number;
  /** How long the write (and then the ping) may take before it counts as failed (default 5000 ms). */
  timeoutMs?: number;
}

/**
 * Whether the gateway can meter: a request it serves must write (a hold, a ledger entry, a record),
 * so health is a committed write (`Storage.probeWrite`), not just a read. When the write fails, a
 * `ping` tells a database that answers but cannot write (a full disk, a read-only file or server)
 * from one that does not answer at all.
 *
 * Cheap under a storm of checks: an answer is reused for `cacheMs`, and checks that arrive while a
 * probe runs share it. A change of state is logged once (by error name, never its message).
 */
export function createHealthCheck(options: HealthCheckOptions = {}) {
  const cacheMs = options.cacheMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 5000;
  let last: { at: EpochMs; result: HealthResult } | undefined;
  let running: Promise<HealthResult> | undefined;

  async function probe(storage: Storage, now: EpochMs, logger: GatewayLogger): Promise<HealthResult> {
    let result: HealthResult;
    let failure: unknown;
    try {
      await withTimeout(storage.probeWrite(now), timeoutMs);
      result = { status: 'ok' };
    } catch (error) {
      failure = error;
      const reachable = await withTimeout(storage.ping(), timeoutMs).then(
        () => true,
        () => false,
      );
      result = { status: 'unavailable', reason: reachable ? 'storage cannot write' : 'storage unreachable' };
    }
    const before = last?.result;
    if (
      result.status === 'unavailable' &&
      (before?.status !== 'unavailable' || before.reason !== result.reason)
    ) {
      const err = failure as { name?: unknown; code?: unknown } | undefined;
      logger.error(
        { reason: result.reason, err: { name: err?.name, code: err?.code } },
        'health: storage failing',
      );
    } else if (result.status === 'ok' && before?.status === 'unavailable') {
      logger.info({}, 'health: storage writes again');
    }
    return result;
  }

  return function check(storage: Storage, now: EpochMs, logger: GatewayLogger): Promise<HealthResult> {
    if (last && now >= last.at && now - last.at < cacheMs) return Promise.resolve(last.result);
    running ??= probe(storage, now, logger)
      .then((result) => {
        last = { at: now, result };
        return result;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

/** `promise`, or a rejection once `ms` have passed. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HealthTimeoutError()), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

class HealthTimeoutError extends Error {
  override name = 'HealthTimeoutError';
}
