import type { Storage } from '@tollgate/core';
import { requestRecord } from '@tollgate/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from './index.js';
import { accountFromOutside, rawConnection, runRaw, tempDatabasePath } from './test-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function openFresh(): Promise<{ path: string; storage: Storage }> {
  const file = tempDatabasePath();
  cleanups.push(file.remove);
  const storage = await createSqliteStorage({ path: file.path });
  cleanups.push(() => storage.close());
  return { path: file.path, storage };
}

/** What another connection (another process, say) sees of the account right now. */
function seenFromOutside(path: string, accountId: string) {
  const { balance, entries } = accountFromOutside(path, accountId);
  return { balance, entries };
}

/**
 * A trigger that rolls back the entire transaction (not just its statement) when a project named
 * `boom` is created, as SQLite itself does on some errors (a full disk, an I/O error).
 */
function rollBackOnProjectBoom(path: string): void {
  const raw = rawConnection(path);
  runRaw(
    raw,
    "CREATE TRIGGER boom BEFORE INSERT ON projects WHEN NEW.name = 'boom' BEGIN SELECT RAISE(ROLLBACK, 'boom'); END",
  );
  raw.close();
}

const credit = (amountMicros: number) => ({ amountMicros, kind: 'credit' as const, description: 'c' });

describe('sqlite group commit', () => {
  it('a write resolves only once it is committed: another connection sees it at that moment', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    expect(seenFromOutside(path, account.id)).toEqual({ balance: 0, entries: 0 });
    let resolved = 0;
    const shortfalls = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        storage.appendLedgerEntries(account.id, [credit(i + 1)]).then(() => {
          resolved++;
          // The k-th write to resolve: at least k entries are committed by then, if none resolved
          // before its group's COMMIT.
          return Math.max(0, resolved - seenFromOutside(path, account.id).entries);
        }),
      ),
    );
    expect(shortfalls).toEqual(Array(40).fill(0));
    expect(seenFromOutside(path, account.id)).toEqual({ balance: (40 * 41) / 2, entries: 40 });
  });

  it('a read outside a transaction resolves only once the writes it saw are committed', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    // Writes open a group; reads queued behind them run on the same connection while it is open,
    // so they see its writes before its COMMIT. Each must wait for that COMMIT before answering:
    // a process killed in between would otherwise have shown a client a balance that is gone.
    const writes = Array.from({ length: 20 }, (_, i) =>
      storage.appendLedgerEntries(account.id, [credit(i + 1)]),
    );
    const ahead = await Promise.all(
      Array.from({ length: 5 }, () =>
        storage.getAccount(account.id).then((seen) => {
          const committed = seenFromOutside(path, account.id).balance ?? 0;
          return {
            sawWrites: (seen?.balanceMicros ?? 0) > 0,
            aheadOfCommit: (seen?.balanceMicros ?? 0) > committed,
          };
        }),
      ),
    );
    await Promise.all(writes);
    expect(ahead.some((r) => r.sawWrites)).toBe(true);
    expect(ahead.filter((r) => r.aheadOfCommit)).toEqual([]);
  });

  it('a failing transaction in a group undoes itself alone', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) =>
        // Every third write fails inside its transaction (an unknown account), between good ones.
        storage.appendLedgerEntries(i % 3 === 1 ? 'acct_missing' : account.id, [credit(10)]),
      ),
    );
    expect(results.filter((r) => r.status === 'rejected')).toHaveLength(10);
    expect(seenFromOutside(path, account.id)).toEqual({ balance: 200, entries: 20 });
  });

  it('a transaction that starts while a group is open and the connection free joins the group at once; a failure there undoes it alone', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    // A write's savepoint ends within the microtasks of this turn and its group commits in the
    // check phase, so each write started after these yields finds the group open and nobody on
    // the connection (the driver's synchronous path).
    const turnOfMicrotasks = async () => {
      for (let i = 0; i < 2_000; i++) await null;
    };
    const first = storage.appendLedgerEntries(account.id, [credit(5)]);
    await turnOfMicrotasks();
    const joined = storage.appendLedgerEntries(account.id, [credit(7)]);
    await turnOfMicrotasks();
    const failing = storage.appendLedgerEntries('acct_missing', [credit(9)]);
    await turnOfMicrotasks();
    const after = storage.appendLedgerEntries(account.id, [credit(11)]);
    const results = await Promise.allSettled([first, joined, failing, after]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(seenFromOutside(path, account.id)).toEqual({ balance: 23, entries: 3 });
  });

  it('a transaction of two statements whose second fails leaves nothing of its first', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    const key = await storage.createApiKey({
      accountId: account.id,
      name: 'k',
      scope: 'inference',
      env: 'live',
      hash: 'a'.repeat(64),
      prefix: 'gw_live_aaa',
    });
    await storage.appendLedgerEntries(account.id, [credit(1_000)]);
    const settle = (id: string) =>
      storage.settleRequest({
        reservationId: null,
        charge: { amountMicros: 100, description: 'x', keyId: key.id },
        record: requestRecord(account.id, { id, keyId: key.id, costMicros: 100 }),
      });
    // The second settle of `gen_1` moves the balance, then fails on the record's primary key, in the
    // same group as the other two: its balance move must be undone with it.
    const results = await Promise.allSettled([settle('gen_1'), settle('gen_1'), settle('gen_2')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(seenFromOutside(path, account.id)).toEqual({ balance: 800, entries: 3 });
  });

  it('a statement that makes SQLite roll back the whole group fails every write of the group, none reports success', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    rollBackOnProjectBoom(path);

    const results = await Promise.allSettled([
      storage.appendLedgerEntries(account.id, [credit(1)]),
      storage.appendLedgerEntries(account.id, [credit(10)]),
      storage.createProject({ accountId: account.id, name: 'boom' }),
      storage.appendLedgerEntries(account.id, [credit(100)]),
    ]);
    const reportedCredits = [1, 10, 0, 100].reduce(
      (sum, amount, i) => sum + (results[i]!.status === 'fulfilled' ? amount : 0),
      0,
    );
    // The first two shared the lost group: they fail, and the last one starts a new group.
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled']);
    // Whatever was reported as done is exactly what the file holds.
    expect(seenFromOutside(path, account.id).balance).toBe(reportedCredits);
    expect(reportedCredits).toBe(100);
  });

  it('a read that saw a group SQLite then rolled back fails rather than answer with what is gone', async () => {
    const { path, storage } = await openFresh();
    const account = await storage.createAccount({ name: 'a' });
    rollBackOnProjectBoom(path);

    const [, read] = await Promise.allSettled([
      storage.appendLedgerEntries(account.id, [credit(10)]),
      // Runs inside the group, after the credit: it would have answered with a balance of 10.
      storage.getAccount(account.id),
      storage.createProject({ accountId: account.id, name: 'boom' }),
    ]);
    expect(read?.status).toBe('rejected');
    expect(seenFromOutside(path, account.id).balance).toBe(0);
    // The next read, in no group, answers with what is committed.
    expect((await storage.getAccount(account.id))?.balanceMicros).toBe(0);
  });
});
