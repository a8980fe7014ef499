import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Copies the WAL back into the database file, and starts the WAL over, from a worker thread, so
 * the event loop never waits for either.
 *
 * SQLite checkpoints on its own every 1,000 WAL pages, inside whichever COMMIT crosses the line,
 * and with `synchronous = NORMAL` a checkpoint is where the fsyncs happen: on the request path that
 * was a third of the cost of a commit and the slowest requests' extra milliseconds. Here a second
 * connection, on a worker thread, runs a PASSIVE checkpoint every `intervalMs`: it never waits for
 * a lock and never blocks a writer, and WAL mode lets the two connections work at once.
 *
 * A PASSIVE checkpoint alone never lets the log start over while the server writes without pause
 * (a JSON request at c=1 commits every ~0.7 ms, a checkpoint takes milliseconds): SQLite rewinds
 * the log only for a writer that finds every frame copied back. The WAL then grew until the server
 * connection's own checkpoint fired (`wal_autocheckpoint`, about every 0.8 s at c=1): three fsyncs
 * on the event loop each time. So once the log holds `restartPages`, the worker finishes the job
 * itself: a FULL checkpoint (it holds writers back only while it copies the frames the PASSIVE pass
 * just before it left, and syncs them: 3–6 ms at c=1), then one tiny write of its own, which is the
 * writer that starts the log over and syncs the new WAL header. Should the server write first, or
 * a reader still read from the log, the log starts over later, as before. (A RESTART checkpoint
 * would also wait for every reader, holding the writers back meanwhile: once 55 ms at c=64.)
 * The server's connection checkpoints only as a backstop (`BACKSTOP_PAGES`), should this worker
 * fall behind or die.
 */
export interface WalCheckpointer {
  /** Stops the worker (after one last checkpoint) and resolves once it has exited. */
  stop(): Promise<void>;
}

export interface WalCheckpointerOptions {
  /** How often the worker checkpoints. */
  intervalMs?: number;
  /** The WAL size, in pages, from which the worker starts the log over (about 40 MB by default). */
  restartPages?: number;
}

/** The server connection's own `wal_autocheckpoint`, in pages: twice the worker's restart size. */
export const BACKSTOP_PAGES = 20_000;

// A CommonJS script for `new Worker(…, { eval: true })`: it is not part of the bundle, so it names
// better-sqlite3 by the path this module resolved.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
// Waiting for a lock here can hold the server's writers back (a FULL checkpoint waits for readers
// of an older snapshot while it holds the write lock): never long, the next tick tries again.
db.pragma('busy_timeout = 50');
// Its own write (below) needs no fsync of its own; a restarted log's header is synced.
db.pragma('synchronous = NORMAL');
const startOver = () => {
  // The first write after a complete checkpoint rewinds the log (when no reader still reads from
  // it); this one rewrites the header's user_version with its own value: it changes only page 1.
  const version = db.pragma('user_version', { simple: true });
  db.pragma('user_version = ' + version);
};
const checkpoint = () => {
  try {
    const [passive] = db.pragma('wal_checkpoint(PASSIVE)');
    if (passive.log < workerData.restartPages) return;
    const [full] = db.pragma('wal_checkpoint(FULL)');
    if (full.busy === 0) startOver();
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

export function startWalCheckpointer(path: string, options: WalCheckpointerOptions = {}): WalCheckpointer {
  const { intervalMs = 200, restartPages = BACKSTOP_PAGES / 2 } = options;
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { path, driver, intervalMs, restartPages },
  });
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
