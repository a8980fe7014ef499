import type { GatewayLogger, Storage } from '@tollgate/core';

/** How often expired holds, idempotency claims and rate-limit windows are deleted. */
export const SWEEP_INTERVAL_MS = 60_000;

/**
 * Deletes expired rows on a timer. Correctness never depends on it (every query ignores what has
 * expired); it only keeps the tables from growing. Several processes sweeping at once is harmless.
 * Returns a function that stops the timer. The timer never keeps the process alive.
 */
export function startExpirySweep(
  storage: Storage,
  logger: GatewayLogger,
  intervalMs = SWEEP_INTERVAL_MS,
): () => void {
  const timer = setInterval(() => {
    storage.sweepExpired(Date.now()).then(
      (deleted) => {
        if (deleted > 0) logger.info({ deleted }, 'swept expired holds, claims and rate-limit windows');
      },
      (error: unknown) =>
        logger.warn({ err: { name: (error as Error)?.name } }, 'sweeping expired rows failed'),
    );
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
