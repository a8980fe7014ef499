import { readFileSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from './index.js';
import { tempDatabasePath } from './test-harness.js';
import { startWalCheckpointer } from './wal-checkpointer.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sizeOf = (path: string) => statSync(path).size;

/** Polls `condition` until it holds or `ms` have passed. */
async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('WAL checkpoints on a worker thread', () => {
  it('copies committed pages into the database file without the server connection doing it', async () => {
    const file = tempDatabasePath();
    cleanups.push(file.remove);
    const storage = await createSqliteStorage({ path: file.path });
    cleanups.push(() => storage.close());
    // Let the worker fold in the schema first, so what follows is the writes alone.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const before = sizeOf(file.path);

    const account = await storage.createAccount({ name: 'wal' });
    for (let i = 0; i < 20; i++) {
      await storage.appendLedgerEntries(
        account.id,
        Array.from({ length: 25 }, (_, j) => ({
          amountMicros: j + 1,
          kind: 'credit' as const,
          description: 'x'.repeat(200),
        })),
      );
    }
    // The server connection checkpoints only past BACKSTOP_PAGES (20,000) WAL pages, so these
    // writes reach the database file only through the worker's passes (every 200 ms; one may come
    // mid-loop and copy only part of them, so wait for the whole, not for the first change).
    await waitFor(() => sizeOf(file.path) > before + 100_000, 5_000);
    expect(sizeOf(file.path)).toBeGreaterThan(before + 100_000);
  });
});

/** The WAL header's checkpoint sequence and salts: they change each time the log starts over. */
const walGeneration = (path: string) => readFileSync(`${path}-wal`).subarray(12, 24).toString('hex');

/** A WAL database with 60 commits in its log and no checkpoint of its own (the backstop is off). */
function serverWithLog(): { path: string; db: Database.Database } {
  const file = tempDatabasePath();
  cleanups.push(file.remove);
  const db = new Database(file.path);
  cleanups.push(() => db.close());
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x TEXT)');
  const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
  for (let i = 0; i < 60; i++) insert.run('x'.repeat(500));
  return { path: file.path, db };
}

describe('the WAL started over on the worker thread', () => {
  it('starts the log over itself once it holds restartPages, with no write of the server', async () => {
    const { path, db } = serverWithLog();
    const before = walGeneration(path);
    const checkpointer = startWalCheckpointer(path, { intervalMs: 20, restartPages: 40 });
    cleanups.push(() => checkpointer.stop());

    await waitFor(() => walGeneration(path) !== before, 5_000);
    expect(walGeneration(path)).not.toBe(before);
    // The server goes on writing into the new log, and reads everything back.
    db.prepare('INSERT INTO t (x) VALUES (?)').run('after');
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 61 });
  });

  it('starts the log over while the server writes without pause', async () => {
    const { path, db } = serverWithLog();
    const before = walGeneration(path);
    const checkpointer = startWalCheckpointer(path, { intervalMs: 20, restartPages: 40 });
    cleanups.push(() => checkpointer.stop());

    // A commit every turn of the event loop: a PASSIVE pass never finds the whole log copied.
    const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
    let written = 0;
    const deadline = Date.now() + 5_000;
    while (walGeneration(path) === before && Date.now() < deadline) {
      insert.run('y'.repeat(500));
      written++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(walGeneration(path)).not.toBe(before);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 60 + written });
  });

  it('below restartPages only copies pages back, and the log starts over at the server’s next write', async () => {
    const { path, db } = serverWithLog();
    const before = walGeneration(path);
    const checkpointer = startWalCheckpointer(path, { intervalMs: 20, restartPages: 10_000 });
    cleanups.push(() => checkpointer.stop());

    // Ten passes: every frame copied back, yet the header unchanged.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(walGeneration(path)).toBe(before);
    db.prepare('INSERT INTO t (x) VALUES (?)').run('after');
    expect(walGeneration(path)).not.toBe(before);
  });
});
