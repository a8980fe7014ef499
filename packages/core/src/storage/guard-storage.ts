import { GatewayError } from '../errors/gateway-error.js';
import type { WalkClock } from '../routing/walk-routes.js';
import { faultKind, type StorageFaults, StorageTimeoutError } from './storage-faults.js';
import type { Storage } from './types.js';

/** The default deadline of one storage call (`GatewayOptions.storageTimeoutMs`, `--db-timeout-ms`). */
export const DEFAULT_STORAGE_TIMEOUT_MS = 5_000;

/**
 * `503 storage_unavailable`: the storage did not answer within its deadline, or failed for a fault
 * of the database (unreachable, read-only, out of space, I/O). `late` is the call itself when it
 * timed out: it may still land, and what it did must then be undone or completed (a hold settled,
 * an idempotency claim released).
 */
export class StorageUnavailableError extends GatewayError {
  constructor(
    readonly late: Promise<unknown> | null,
    options?: { cause?: unknown },
  ) {
    super(
      'storage_unavailable',
      late
        ? "The gateway's storage did not answer in time; retry shortly."
        : "The gateway's storage cannot be used right now; retry shortly.",
      { 'Retry-After': '1' },
    );
    this.name = 'StorageUnavailableError';
    if (options && 'cause' in options) this.cause = options.cause;
  }
}

// Methods that only read: their failures do not make a write fail (a probe of writes follows).
const READS = /^(get|find|list|count|ping$)/;
// Writes whose success is no proof that a request's writes fit: the probe (one row rewritten in
// place) and the housekeeping that deletes or touches existing rows, which a full disk still takes.
const NO_PROOF = new Set([
  'probeWrite',
  'sweepExpired',
  'claimBatchItems',
  'renewBatchLeases',
  'extendReservation',
  'releaseReservation',
  'releaseIdempotencyKey',
]);
// Left as they are: closing, and the change feed's subscription (a listening connection of its own).
const UNGUARDED = new Set(['close', 'subscribeAuthChanges']);

interface GuardStorageOptions {
  timeoutMs: number;
  clock: Pick<WalkClock, 'now' | 'schedule'>;
  faults: StorageFaults;
}

/**
 * The storage every part of the gateway uses: each call gets a deadline, a database fault becomes
 * `StorageUnavailableError` (so a request answers `503 storage_unavailable`, never `500`), and the
 * outcome of every write goes to `faults`, which `/healthz` and `/readyz` read. A refusal of the
 * data (a constraint, an unknown id) passes through unchanged. One wrapper for every adapter.
 */
export function guardStorage(storage: Storage, options: GuardStorageOptions): Storage {
  const { timeoutMs, clock, faults } = options;
  const wrapped = new Map<PropertyKey, unknown>();

  const guard = (name: string, method: (...args: unknown[]) => unknown) => {
    const isRead = READS.test(name);
    const isProof = !isRead && !NO_PROOF.has(name);
    const isMetering = name === 'reserveCredit' || name === 'settleRequest';
    const failed = (error: unknown) => {
      const kind = faultKind(error);
      if (kind && !isRead) faults.writeFailed(kind, clock.now(), error);
      return kind;
    };
    return function guarded(this: unknown, ...args: unknown[]): unknown {
      const result = method.apply(storage, args) as PromiseLike<unknown> | undefined;
      if (typeof result?.then !== 'function') return result;
      const call = Promise.resolve(result).then(
        (value) => {
          if (isProof) faults.writeSucceeded(isMetering);
          return value;
        },
        (error: unknown) => {
          throw failed(error) ? new StorageUnavailableError(null, { cause: error }) : error;
        },
      );
      return new Promise((resolve, reject) => {
        let timedOut = false;
        const cancel = clock.schedule(() => {
          timedOut = true;
          const timeout = new StorageTimeoutError(`storage call ${name} took over ${timeoutMs} ms`);
          failed(timeout);
          // What the call does after its deadline is its caller's to finish (see `late`).
          const late = call.catch(() => undefined);
          reject(new StorageUnavailableError(late, { cause: timeout }));
        }, timeoutMs);
        call.then(
          (value) => {
            if (timedOut) return;
            cancel();
            resolve(value);
          },
          (error: unknown) => {
            if (timedOut) return;
            cancel();
            reject(error);
          },
        );
      });
    };
  };

  return new Proxy(storage, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || UNGUARDED.has(property)) {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      let method = wrapped.get(property);
      if (!method) {
        method = guard(property, value as (...args: unknown[]) => unknown);
        wrapped.set(property, method);
      }
      return method;
    },
  });
}
