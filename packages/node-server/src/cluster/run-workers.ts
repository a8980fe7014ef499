import cluster, { type Worker } from 'node:cluster';
import type { GatewayLogger } from '@tollgate/core';

export interface WorkersOptions {
  count: number;
  logger: GatewayLogger;
  /** Resolves when the primary is asked to stop (SIGTERM/SIGINT). */
  shutdown: Promise<string>;
  /** Called once, when every worker listens, with the address they share. */
  onListening: (port: number) => void;
}

/**
 * The primary of `tollgate serve --workers N`: forks N workers that each run the gateway on the
 * same port (node:cluster hands connections round-robin to them), replaces a worker that dies, and
 * on shutdown asks every worker to drain (SIGTERM) and waits for them to exit.
 * Workers share nothing in memory: limits, holds and idempotency live in the database.
 */
export async function runWorkers(options: WorkersOptions): Promise<number> {
  const { count, logger } = options;
  let stopping = false;
  const listening = new Set<number>();
  let announced = false;

  const fork = (): Worker => {
    const worker = cluster.fork({ TOLLGATE_WORKER: '1' });
    worker.on('listening', (address) => {
      listening.add(worker.id);
      if (!announced && listening.size === count) {
        announced = true;
        options.onListening(address.port);
      }
    });
    worker.on('exit', (code, signal) => {
      listening.delete(worker.id);
      if (stopping) return;
      logger.error({ worker: worker.id, code, signal }, 'worker exited; starting a replacement');
      fork();
    });
    return worker;
  };

  for (let i = 0; i < count; i++) fork();
  const reason = await options.shutdown;
  stopping = true;
  logger.info({ reason, workers: count }, 'shutting down: workers drain in-flight requests');
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
  logger.info({}, 'stopped');
  return 0;
}
