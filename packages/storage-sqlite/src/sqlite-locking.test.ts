import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Storage } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from './index.js';
import { accountFromOutside, rawConnection, runRaw, tempDatabasePath } from './test-harness.js';

const run = promisify(execFile);
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function freshFile() {
  const file = tempDatabasePath();
  cleanups.push(file.remove);
  return file.path;
}

async function open(path: string, busyTimeoutMs?: number): Promise<Storage> {
  const storage = await createSqliteStorage({ path, ...(busyTimeoutMs ? { busyTimeoutMs } : {}) });
  cleanups.push(() => storage.close());
  return storage;
}

describe('sqlite locking', () => {
  it('appendLedgerEntries - three storages on one file never fail with SQLITE_BUSY and keep balance == Σ ledger', async () => {
    const path = await freshFile();
    const storages = [await open(path), await open(path), await open(path)];
    const account = await storages[0]!.createAccount({ name: 'shared' });

    await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        i % 5 === 4
          ? storages[i % 3]!.getAccount(account.id)
          : storages[i % 3]!.appendLedgerEntries(account.id, [
              { amountMicros: 1_000 + i, kind: 'credit', description: `credit ${i}` },
              { amountMicros: -(10 + i), kind: 'fee', description: `fee ${i}` },
            ]),
      ),
    );

    const { balance, total, entries } = accountFromOutside(path, account.id);
    expect(entries).toBe(120 * 2);
    expect(balance).toBe(total);
    expect((await storages[2]!.getAccount(account.id))?.balanceMicros).toBe(total);
  });

  it('appendLedgerEntries - two other processes and this one write the same file at once', async () => {
    const path = await freshFile();
    const storage = await open(path);
    const account = await storage.createAccount({ name: 'shared' });
    await storage.appendLedgerEntries(account.id, [
      { amountMicros: 1_000_000, kind: 'credit', description: 'seed' },
    ]);

    const writer = fileURLToPath(new URL('./fixtures/append-writer.ts', import.meta.url));
    const child = () =>
      run(process.execPath, ['--import', 'tsx', writer, path, account.id, '60'], {
        cwd: fileURLToPath(new URL('../../..', import.meta.url)),
      });
    const here = Array.from({ length: 60 }, () =>
      storage.appendLedgerEntries(account.id, [{ amountMicros: -1, kind: 'charge', description: 'parent' }]),
    );
    const [first, second] = await Promise.all([child(), child(), ...here]);

    expect([first.stdout, second.stdout]).toEqual(['done', 'done']);
    const { balance, total, entries } = accountFromOutside(path, account.id);
    expect(entries).toBe(1 + 3 * 60);
    expect(balance).toBe(1_000_000 - 3 * 60);
    expect(total).toBe(balance);
  }, 60_000);

  it('a write waits for a lock held by another connection without blocking the event loop', async () => {
    const path = await freshFile();
    const storage = await open(path);
    const other = rawConnection(path);
    cleanups.push(() => other.close());

    runRaw(other, 'BEGIN IMMEDIATE');
    // Released by a timer: if the storage waited inside SQLite (synchronously), this would never run.
    setTimeout(() => runRaw(other, 'COMMIT'), 100);
    const started = Date.now();
    const account = await storage.createAccount({ name: 'patient' });

    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
    expect(await storage.getAccount(account.id)).toEqual(account);
  });

  it('a write gives up with SQLITE_BUSY once busyTimeoutMs has passed, and writes nothing', async () => {
    const path = await freshFile();
    const storage = await open(path, 150);
    const other = rawConnection(path);
    cleanups.push(() => other.close());
    runRaw(other, 'BEGIN IMMEDIATE');
    const started = Date.now();
    await expect(storage.createAccount({ name: 'impatient' })).rejects.toMatchObject({
      code: expect.stringMatching(/^SQLITE_BUSY/),
    });
    runRaw(other, 'COMMIT');

    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    // That the event loop runs meanwhile is the test above's (a timer releases the lock); counting
    // timer ticks here would measure the machine's load, not the storage.
    expect(await storage.countAccounts()).toBe(0);
  });
});
