import { PGlite } from '@electric-sql/pglite';
import { newId, type Storage } from '@tollgate/core';
import { meteredAccount, requestRecord } from '@tollgate/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { countPgliteStatements, countPgStatements } from './count-statements.test-support.js';
import { createPgliteStorage } from './index.js';
import { postgresHarness } from './test-harness.js';

/*
 * Round trips per metered operation on Postgres: every statement sent to the server is one
 * (BEGIN and COMMIT included), so reserve and settle, the request path's writes, must be one
 * statement each. Counted where the statements leave the process: pg's `Client.query` (every
 * statement of the pool's clients, prepared or not) and PGlite's `query`, `exec` and `transaction`
 * (its BEGIN and COMMIT or ROLLBACK, and each statement inside).
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.restoreAllMocks();
});

/** How many statements each step of one metered request sends, after a warm-up request. */
async function roundTrips(storage: Storage, counter: { count: number }) {
  const { account, key } = await meteredAccount(storage, {
    balanceMicros: 0,
    spendLimitMicros: 1_000_000_000,
    name: 'round trips',
  });
  const counts: Record<string, number> = {};
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const before = counter.count;
    const result = await run();
    counts[name] = counter.count - before;
    return result;
  };
  await step('append', () =>
    storage.appendLedgerEntries(account.id, [{ amountMicros: 1_000_000, kind: 'credit', description: 'c' }]),
  );
  for (const _ of [1, 2]) {
    const requestId = newId('gen');
    const record = requestRecord(account.id, { id: requestId, keyId: key.id, costMicros: 1_234 });
    const reserved = await step('reserve', () =>
      storage.reserveCredit({
        accountId: account.id,
        keyId: key.id,
        requestId,
        amountMicros: 5_000,
        now: Date.now(),
        ttlMs: 60_000,
        record: { ...record, status: 'in_progress' },
      }),
    );
    if (!reserved.ok) throw new Error('the hold was refused');
    await step('settle', () =>
      storage.settleRequest({
        reservationId: reserved.reservation.id,
        record,
        charge: { amountMicros: 1_234, description: 'd', keyId: key.id },
      }),
    );
    await step('settle without a charge', () =>
      storage.settleRequest({
        reservationId: null,
        record: requestRecord(account.id, { keyId: key.id }),
        charge: null,
      }),
    );
  }
  const refused = await step('refused reserve', () =>
    storage.reserveCredit({
      accountId: account.id,
      keyId: key.id,
      requestId: newId('gen'),
      amountMicros: 10_000_000,
      now: Date.now(),
      ttlMs: 60_000,
    }),
  );
  expect(refused).toMatchObject({ ok: false, reason: 'insufficient_credit' });
  expect(await storage.getAccount(account.id)).toMatchObject({ balanceMicros: 1_000_000 - 2 * 1_234 });
  // The request's rate-limit hit rides with its hold; a refused hit reads both windows for Retry-After.
  const now = Date.now();
  const withHit = () =>
    storage.reserveCredit({
      accountId: account.id,
      keyId: key.id,
      requestId: newId('gen'),
      amountMicros: 1,
      now,
      ttlMs: 60_000,
      rateLimit: { subject: `key:${key.id}`, limit: 1, windowMs: 60_000, now },
    });
  expect(await step('reserve with its rate-limit hit', withHit)).toMatchObject({ ok: true });
  expect(await step('reserve whose hit is refused', withHit)).toMatchObject({
    ok: false,
    reason: 'rate_limited',
  });
  return counts;
}

const EXPECTED = {
  // A kysely transaction (BEGIN, balance update, ledger insert, COMMIT): proves BEGIN/COMMIT count.
  append: 4,
  reserve: 1,
  settle: 1,
  'settle without a charge': 1,
  'refused reserve': 1,
  'reserve with its rate-limit hit': 1,
  'reserve whose hit is refused': 3,
};

describe('postgres round trips per metered operation', () => {
  it('PGlite: reserve and settle send one statement each', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const storage = await createPgliteStorage({ pglite, schema: 'round_trips' });
    const counter = countPgliteStatements(pglite);
    expect(await roundTrips(storage, counter)).toEqual(EXPECTED);
  });

  const databaseUrl = process.env.TEST_DATABASE_URL;
  it.skipIf(!databaseUrl)(
    'server at TEST_DATABASE_URL: reserve and settle are one round trip each',
    async () => {
      const harness = await postgresHarness(databaseUrl!);
      cleanups.push(() => harness.close());
      const counter = countPgStatements();
      expect(await roundTrips(harness.storage, counter)).toEqual(EXPECTED);
    },
  );
});
