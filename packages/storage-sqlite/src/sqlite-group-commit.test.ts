import type { Storage } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorage } from './index.js';
import { rawConnection, runRaw, tempDatabasePath } from './test-harness.js';

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
  const raw = rawConnection(path);
  try {
    const [row] = runRaw(
      raw,
      `SELECT (SELECT balance_micros FROM accounts WHERE id = '${accountId}') AS balance,
              (SELECT COUNT(*) FROM ledger_entries WHERE account_id = '${accountId}') AS entries`,
    );
    return row as { balance: number | null; entries: number };
  } finally {
    raw.close();
  }
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
        record: {
          id,
          accountId: account.id,
          keyId: key.id,
          projectId: null,
          endpoint: 'chat.completions',
          requestedModel: 'm',
          model: 'm',
          provider: 'p',
          status: 'success',
          httpStatus: 200,
          errorCode: null,
          errorMessage: null,
          stream: false,
          promptTokens: 1,
          completionTokens: 1,
          cachedTokens: 0,
          costMicros: 100,
          savedMicros: 0,
          waived: null,
          byok: false,
          cacheHit: false,
          ttftMs: null,
          durationMs: 1,
          finishReason: 'stop',
          attempts: 1,
          routingFailures: [],
          attachments: {},
          guardrails: [],
          metadata: {},
          createdAt: Date.now(),
        },
      });
    // The second settle of `gen_1` moves the balance, then fails on the record's primary key, in the
    // same group as the other two: its balance move must be undone with it.
    const results = await Promise.allSettled([settle('gen_1'), settle('gen_1'), settle('gen_2')]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(seenFromOutside(path, account.id)).toEqual({ balance: 800, entries: 3 });
  });
});
