import type { GatewayLogger } from '../telemetry/gateway-logger.js';
import type { EpochMs } from './scalars.js';

/** Why storage is failing, as `/healthz` and `/readyz` say it: fixed strings, never a driver's message. */
export const HEALTH_REASONS = ['storage cannot write', 'storage unreachable'] as const;
export type HealthReason = (typeof HEALTH_REASONS)[number];

/** What kind of fault a storage error is; `null` for a refusal of the data (a constraint, a bad id). */
type FaultKind = 'unreachable' | 'cannot_write' | 'out_of_space';

/** The deadline passed before the storage answered. */
export class StorageTimeoutError extends Error {
  override name = 'StorageTimeoutError';
}

// Driver codes of a database that cannot be used now, as opposed to one refusing a row.
const OUT_OF_SPACE_CODES = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT', '53100']);
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'SQLITE_CANTOPEN',
  'SQLITE_NOTADB',
  'SQLITE_MISUSE',
]);
// SQLSTATE classes: 08 connection exception, 53 insufficient resources, 57 operator intervention
// (a server shutting down, a cancelled statement), 58 system error (I/O), XX internal error.
const UNREACHABLE_SQLSTATE = /^(08|57)/;
const CANNOT_WRITE_SQLSTATE = /^(25006|53|58|XX)/;
// pg and pg-pool report a lost or refused connection by message only; better-sqlite3 reports a
// closed database the same way.
const UNREACHABLE_MESSAGE =
  /connection terminated|timeout exceeded when trying to connect|not queryable|cannot use a pool after calling end|database connection is not open|the database is closed/i;

/**
 * Sorts a storage rejection: a fault of the database (it cannot be reached, cannot write, is out of
 * space) or `null` for the storage refusing this operation's data, which says nothing about health.
 */
export function faultKind(error: unknown): FaultKind | null {
  if (error instanceof StorageTimeoutError) return 'unreachable';
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (OUT_OF_SPACE_CODES.has(code)) return 'out_of_space';
    if (UNREACHABLE_CODES.has(code)) return 'unreachable';
    if (/^SQLITE_(IOERR|READONLY|CORRUPT|NOMEM|BUSY|LOCKED|PROTOCOL|PERM|ABORT)/.test(code)) {
      return 'cannot_write';
    }
    if (/^(EIO|EROFS|EACCES|EPERM)$/.test(code)) return 'cannot_write';
    if (code.length === 5 && UNREACHABLE_SQLSTATE.test(code)) return 'unreachable';
    if (code.length === 5 && CANNOT_WRITE_SQLSTATE.test(code)) return 'cannot_write';
  }
  if (typeof message === 'string' && UNREACHABLE_MESSAGE.test(message)) return 'unreachable';
  return null;
}

/** How long a failure for want of space stands against a successful health probe (30 s). */
export const OUT_OF_SPACE_PROBE_DISTRUST_MS = 30_000;

/**
 * The outcome of the latest storage writes: failing from a write that failed for a fault until a
 * write succeeds again. A health probe (`probeWrite`, one small row rewritten in place) that
 * succeeds is proof enough after a lost connection or a read-only database, but not after a write
 * failed for want of space — a tiny rewrite can still fit where a request's rows do not — so then
 * only a metered request's hold or settle clears it, or a probe once no write has failed for
 * `OUT_OF_SPACE_PROBE_DISTRUST_MS` (else a process the balancer stopped sending to could never
 * become ready again once space was freed).
 */
export class StorageFaults {
  #failing: { reason: HealthReason; outOfSpace: boolean; at: EpochMs } | null = null;

  constructor(private readonly logger: GatewayLogger) {}

  /** The reason storage is failing now, or `null`. */
  get failing(): HealthReason | null {
    return this.#failing?.reason ?? null;
  }

  /** A write failed at `now` for a fault of `kind` (`error` is logged by name and code only). */
  writeFailed(kind: FaultKind, now: EpochMs, error: unknown): void {
    this.#fail(kind === 'unreachable' ? 'storage unreachable' : 'storage cannot write', now, error, {
      outOfSpace: kind === 'out_of_space',
    });
  }

  /**
   * A write other than the probe committed. After a failure for want of space only a metered
   * request's own writes (`metering`: its hold, its settle) prove there is room again: a small row
   * (a refusal's record) can still fit where they did not.
   */
  writeSucceeded(metering: boolean): void {
    const failing = this.#failing;
    if (failing && (metering || !failing.outOfSpace)) this.#recover();
  }

  /** The health probe committed at `now`; clears the failure unless space may still be short. */
  probeSucceeded(now: EpochMs): void {
    const failing = this.#failing;
    if (failing && (!failing.outOfSpace || now - failing.at >= OUT_OF_SPACE_PROBE_DISTRUST_MS)) {
      this.#recover();
    }
  }

  /** The reason the health check found for a failed probe (a ping tells unreachable from read-only). */
  confirm(reason: HealthReason, now: EpochMs, error: unknown): void {
    this.#fail(reason, now, error, { outOfSpace: false });
  }

  #fail(reason: HealthReason, now: EpochMs, error: unknown, how: { outOfSpace: boolean }): void {
    const before = this.#failing;
    this.#failing = { reason, outOfSpace: how.outOfSpace || (before?.outOfSpace ?? false), at: now };
    if (before?.reason === reason) return;
    const err = error as { name?: unknown; code?: unknown } | undefined;
    this.logger.error({ reason, err: { name: err?.name, code: err?.code } }, 'health: storage failing');
  }

  #recover(): void {
    this.#failing = null;
    this.logger.info({}, 'health: storage writes again');
  }
}
