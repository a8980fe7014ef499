import { StorageUnavailableError } from '../../storage/guard-storage.js';
import { HEALTH_REASONS, type HealthReason, type StorageFaults } from '../../storage/storage-faults.js';
import type { EpochMs, Storage } from '../../storage/types.js';

export { HEALTH_REASONS };

type HealthResult = { status: 'ok' } | { status: 'unavailable'; reason: HealthReason };

interface HealthCheckOptions {
  /** How long one probe's answer is reused (default 1000 ms), so a burst of checks costs one write. */
  cacheMs?: number;
}

/**
 * Whether the gateway can meter: a request it serves must write (a hold, a ledger entry, a record),
 * so health is a committed write (`Storage.probeWrite`), not just a read, and no request's write has
 * failed since (`StorageFaults`: the latest write of any kind decides). When the probe fails, a
 * `ping` tells a database that answers but cannot write (a full disk, a read-only file or server)
 * from one that does not answer at all; a probe past the storage's deadline is the latter.
 *
 * `storage` is the gateway's guarded storage (`guardStorage`): its deadline bounds the probe, and it
 * tells `faults` of every write. Cheap under a storm of checks: a probe runs at most once per
 * `cacheMs`, and checks that arrive while one runs share it. While storage is known to be
 * unreachable, a check answers at once and the probe runs behind it, so a hung database never hangs
 * the check.
 */
export function createHealthCheck(options: HealthCheckOptions = {}) {
  const cacheMs = options.cacheMs ?? 1000;
  let probedAt: EpochMs | undefined;
  let running: Promise<void> | undefined;

  async function probe(storage: Storage, faults: StorageFaults, now: EpochMs): Promise<void> {
    try {
      await storage.probeWrite(now);
      faults.probeSucceeded(now);
    } catch (error) {
      const cause = error instanceof StorageUnavailableError ? error.cause : error;
      const timedOut = error instanceof StorageUnavailableError && error.late !== null;
      const reachable =
        !timedOut &&
        (await storage.ping().then(
          () => true,
          () => false,
        ));
      faults.confirm(reachable ? 'storage cannot write' : 'storage unreachable', now, cause);
    }
  }

  return async function check(storage: Storage, faults: StorageFaults, now: EpochMs): Promise<HealthResult> {
    const due = probedAt === undefined || now < probedAt || now - probedAt >= cacheMs;
    if (due && !running) {
      probedAt = now;
      running = probe(storage, faults, now).finally(() => {
        running = undefined;
      });
    }
    // An unreachable database is the one a probe waits on until its deadline: say so at once.
    if (running && faults.failing !== 'storage unreachable') await running;
    const reason = faults.failing;
    return reason ? { status: 'unavailable', reason } : { status: 'ok' };
  };
}
