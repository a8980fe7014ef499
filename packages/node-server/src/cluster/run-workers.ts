import cluster, { type Worker } from 'node:cluster';
import type { GatewayLogger } from '@tollgate/core';

export interface WorkersOptions {
  count: number;
  logger: GatewayLogger;
  /** Resolves when the primary is asked to stop (SIGTERM/SIGINT). */
  shutdown: Promise<string>;
  /** Called once, when every worker listens, with the port they share; a rejection is logged. */
  onListening: (port: number) => void | Promise<void>;
  /**
   * The error `runWorkers` rejects with when a worker exits before every worker listened (the port
   * is in use, the database cannot be opened…): then no replacement is started and the others are
   * stopped, since a replacement would fail the same way, forever.
   */
  onStartFailure: () => Error;
}

/**
 * The primary of `tollgate serve --workers N`: forks N workers that each run the gateway on the
 * same port (node:cluster hands connections round-robin to them), replaces a worker that dies once
 * all have listened (before that, a worker's exit fails the start), and on shutdown asks every
 * worker to drain (SIGTERM) and waits for them to exit.
 * Workers share nothing in memory: limits, holds and idempotency live in the database.
 */
export async function runWorkers(options: WorkersOptions): Promise<number> {
  const { count, logger } = options;
  let stopping = false;
  const listening = new Set<number>();
  let announced = false;
  let failStart!: (error: Error) => void;
  const startFailed = new Promise<never>((_, reject) => {
    failStart = reject;
  });

  const fork = (): Worker => {
    const worker = cluster.fork({ TOLLGATE_WORKER: '1' });
    worker.on('listening', (address) => {
      listening.add(worker.id);
      if (!announced && listening.size === count) {
        announced = true;
        Promise.resolve()
          .then(() => options.onListening(address.port))
          .catch((error) => logger.error({ err: error }, 'the start-up step after listening failed'));
      }
    });
    worker.on('exit', (code, signal) => {
      listening.delete(worker.id);
      if (stopping) return;
      if (!announced) {
        stopping = true;
        logger.error({ worker: worker.id, code, signal }, 'a worker exited before listening; stopping');
        failStart(options.onStartFailure());
        return;
      }
      logger.error({ worker: worker.id, code, signal }, 'worker exited; starting a replacement');
      fork();
    });
    return worker;
  };

  for (let i = 0; i < count; i++) fork();
  let reason: string;
  try {
    reason = await Promise.race([options.shutdown, startFailed]);
  } catch (error) {
    await stopWorkers();
    throw error;
  }
  stopping = true;
  logger.info({ reason, workers: count }, 'shutting down: workers drain in-flight requests');
  await stopWorkers();
  logger.info({}, 'stopped');
  return 0;
}

/** Asks every live worker to drain (SIGTERM) and resolves once all have exited. */
async function stopWorkers(): Promise<void> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => Boolean(w));
  await Promise.all(
    workers.map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) return resolve();
          worker.once('exit', () => resolve());
          worker.process.kill('SIGTERM');
        }),
    ),
  );
}
