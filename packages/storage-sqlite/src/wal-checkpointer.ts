import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Copies the WAL back into the database file from a worker thread, so the event loop never waits
 * for it.
 *
 * SQLite checkpoints on its own every 1,000 WAL pages, inside whichever COMMIT crosses the line,
 * and with `synchronous = NORMAL` a checkpoint is where the fsyncs happen: on the request path that
 * was a third of the cost of a commit and the slowest requests' extra milliseconds. Here the
 * server's connection checkpoints only as a backstop (`BACKSTOP_PAGES`, should this worker fall
 * behind or die) and a second connection, on a worker thread, runs a PASSIVE checkpoint every
 * `intervalMs`. PASSIVE never waits for a lock and never blocks a writer; WAL mode lets the two
 * connections work at once.
 */
export interface WalCheckpointer {
  /** Stops the worker (after one last checkpoint) and resolves once it has exited. */
  stop(): Promise<void>;
}

/** The server connection's own `wal_autocheckpoint`, in pages: about 40 MB of WAL. */
export const BACKSTOP_PAGES = 10_000;

// A CommonJS script for `new Worker(…, { eval: true })`: it is not part of the bundle, so it names
// better-sqlite3 by the path this module resolved.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or failing this time: the next tick tries again, and the server's backstop remains.
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export function startWalCheckpointer(path: string, intervalMs = 200): WalCheckpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, intervalMs } });
  // Never keeps the process alive, and a worker that fails leaves the backstop checkpoints.
  worker.unref();
  worker.on('error', () => {});
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    stop() {
      // Waited for: the process stays up until the worker (perhaps still starting) has exited.
      worker.ref();
      worker.postMessage('stop');
      return exited;
    },
  };
}
