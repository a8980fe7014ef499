import cluster, { type Worker } from 'node:cluster';
import type { GatewayLogger } from '@tollgate/core';

export interface WorkersOptions {
  count: number;
  logger: GatewayLogger;
  /** Resolves when the primary is asked to stop (SIGTERM/SIGINT). */
  shutdown: Promise<string>;
  /** How long the workers' drains may take before the ones left are killed (SIGKILL). */
  stopWithinMs: number;
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
 * worker to drain (`DRAIN_MESSAGE`: each runs the drain `serve` runs on a signal) and waits for them
 * to exit. Should the primary itself exit first (a second signal), the workers are killed with it.
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
  process.once('exit', () => {
    for (const worker of liveWorkers()) worker.process.kill('SIGKILL');
  });
  const timer = setTimeout(() => {
    logger.error({ workers: liveWorkers().length }, 'workers still running past their drain: killing them');
    for (const worker of liveWorkers()) worker.process.kill('SIGKILL');
  }, options.stopWithinMs);
  await stopWorkers((worker) => {
    try {
      worker.send(DRAIN_MESSAGE);
    } catch {
      // Its channel is closing (it is exiting already): a signal starts the same drain.
      worker.process.kill('SIGTERM');
    }
  });
  clearTimeout(timer);
  logger.info({}, 'stopped');
  return 0;
}

/** What a worker's `serve` takes as the start of its drain, as it would a signal. */
export const DRAIN_MESSAGE = { tollgate: 'drain' } as const;

/** The workers not yet exited. */
function liveWorkers(): Worker[] {
  return Object.values(cluster.workers ?? {}).filter((w): w is Worker => Boolean(w) && !w!.isDead());
}

/** Asks every live worker to stop (`ask`, by default SIGTERM) and resolves once all have exited. */
async function stopWorkers(ask: (worker: Worker) => void = (worker) => worker.process.kill('SIGTERM')) {
  await Promise.all(
    liveWorkers().map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.once('exit', () => resolve());
          ask(worker);
        }),
    ),
  );
}
