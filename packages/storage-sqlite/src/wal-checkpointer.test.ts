import { statSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from './index.js';
import { tempDatabasePath } from './test-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sizeOf = (path: string) => statSync(path).size;

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
    // The server connection checkpoints only past 10,000 WAL pages, so these writes reach the
    // database file only through the worker's passes (every 200 ms; one may come mid-loop and copy
    // only part of them, so wait for the whole, not for the first change).
    const deadline = Date.now() + 5_000;
    while (sizeOf(file.path) <= before + 100_000 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(sizeOf(file.path)).toBeGreaterThan(before + 100_000);
  });
});
