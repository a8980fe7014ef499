import cluster from 'node:cluster';
import { DRAIN_MESSAGE } from '../cluster/run-workers.js';
import { intOption, type OptionValues } from './parse-values.js';

/** `serve`'s options that say how long it waits: on storage, and from a signal to its exit. */
export const SHUTDOWN_OPTIONS = {
  'drain-delay-ms': { type: 'string' },
  'grace-ms': { type: 'string' },
  'drain-timeout-ms': { type: 'string' },
  'db-timeout-ms': { type: 'string' },
} as const;

export interface ServeTimings {
  /** After a signal, how long new requests are still served while `/readyz` answers 503. */
  drainDelayMs: number;
  /** From the signal, how long in-flight requests and streams may run before they are cut. */
  graceMs: number;
  /** How long one storage call may take before the request answers `503 storage_unavailable`. */
  dbTimeoutMs: number;
}

const HOUR_MS = 3_600_000;

/**
 * The timings of `serve`, each from its flag, else its environment variable, else its default:
 * `--drain-delay-ms` (`TOLLGATE_DRAIN_DELAY_MS`, 5,000), `--grace-ms` (`TOLLGATE_GRACE_MS`, 60,000;
 * `--drain-timeout-ms` is its older name), `--db-timeout-ms` (`TOLLGATE_DB_TIMEOUT_MS`, 5,000).
 */
export function readServeTimings(
  values: OptionValues<typeof SHUTDOWN_OPTIONS>,
  env: Record<string, string | undefined>,
): ServeTimings {
  const read = (flag: string, text: string | undefined, fallback: number, min: number) =>
    text === undefined || text === '' ? fallback : intOption('serve', flag, text, min, HOUR_MS);
  return {
    drainDelayMs: read('drain-delay-ms', values['drain-delay-ms'] ?? env.TOLLGATE_DRAIN_DELAY_MS, 5_000, 0),
    graceMs: read(
      'grace-ms',
      values['grace-ms'] ?? values['drain-timeout-ms'] ?? env.TOLLGATE_GRACE_MS,
      60_000,
      0,
    ),
    dbTimeoutMs: read('db-timeout-ms', values['db-timeout-ms'] ?? env.TOLLGATE_DB_TIMEOUT_MS, 5_000, 1),
  };
}

/**
 * Resolves with the first SIGTERM or SIGINT (in a cluster worker, also with the primary's drain
 * message). A second signal ends the process at once (exit code 128 + the signal's number, as its
 * default action would say): holds still open are left to the expiry sweep.
 */
export function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      process.once(signal === 'SIGTERM' ? 'SIGINT' : 'SIGTERM', exitAtOnce);
      process.once(signal, exitAtOnce);
      resolve(signal);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    if (cluster.isWorker) {
      process.on('message', (message: unknown) => {
        if ((message as { tollgate?: unknown })?.tollgate === DRAIN_MESSAGE.tollgate) resolve('drain');
      });
    }
  });
}

function exitAtOnce(signal: NodeJS.Signals): void {
  process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
}
