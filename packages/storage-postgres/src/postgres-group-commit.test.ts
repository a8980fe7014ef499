import { PGlite } from '@electric-sql/pglite';
import { newId, type Storage } from '@tollgate/core';
import { meteredAccount, requestRecord, type StorageHarness } from '@tollgate/core/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { countPgliteStatements, countPgStatements } from './count-statements.test-support.js';
import { pgliteHarness, postgresHarness } from './test-harness.js';

/*
 * Group commit of the native reserve and settle: the calls of one turn of the
 * event loop go out as one statement, and each caller still gets exactly its own result or error.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.restoreAllMocks();
});

/** A hold of `amountMicros` for a new request of the account's key, for a minute from now. */
function reserveNew(storage: Storage, accountId: string, keyId: string, amountMicros: number) {
  return storage.reserveCredit({
    accountId,
    keyId,
    requestId: newId('gen'),
    amountMicros,
    now: Date.now(),
    ttlMs: 60_000,
  });
}

async function batchSemantics(harness: StorageHarness, counter: { count: number }) {
  const { storage } = harness;
  const { account, key } = await meteredAccount(storage, { balanceMicros: 1_000, name: 'group commit' });
  // Open the pool's connections first: a new one sets its search_path, a statement of its own.
  await Promise.all([1, 2, 3, 4].map(() => storage.ping()));
  const reserve = (amountMicros: number) => reserveNew(storage, account.id, key.id, amountMicros);

  // Five reserves of 300 in one turn against 1,000: one statement, exactly three holds.
  let before = counter.count;
  const reserves = await Promise.all([1, 2, 3, 4, 5].map(() => reserve(300)));
  expect(counter.count - before).toBe(1);
  expect(reserves.map((r) => (r.ok ? 'held' : r.reason))).toEqual([
    'held',
    'held',
    'held',
    'insufficient_credit',
    'insufficient_credit',
  ]);
  expect(reserves[3]).toMatchObject({ balanceMicros: 1_000, availableMicros: 100 });

  // In one turn: a settle, a second settle of the same request, one of a missing account, and a
  // reserve of a missing account. Only the failing calls fail, each with its own message.
  const held = reserves[0]!;
  if (!held.ok) throw new Error('refused');
  const record = requestRecord(account.id, { id: newId('gen'), keyId: key.id, costMicros: 250 });
  const charge = { amountMicros: 250, description: 'd', keyId: key.id };
  const missing = requestRecord('acct_missing', { id: newId('gen') });
  before = counter.count;
  const settled = await Promise.allSettled([
    storage.settleRequest({ reservationId: held.reservation.id, record, charge }),
    storage.settleRequest({ reservationId: null, record, charge }),
    storage.settleRequest({ reservationId: null, record: missing, charge: { ...charge, keyId: null } }),
    reserveNew(storage, 'acct_missing', key.id, 1),
  ]);
  // One batch of both kinds (`tollgate_meter_batch`) failed as a whole (a request settled
  // twice, a missing account); the settles then went to the set-based settle function, which failed
  // too, then to the per-call one, and the reserve, alone of its kind, to the per-call one.
  expect(counter.count - before).toBe(4);
  expect(settled[0]).toEqual({ status: 'fulfilled', value: { balanceMicros: 750 } });
  expect(settled[1]).toMatchObject({
    status: 'rejected',
    reason: { message: `request ${record.id} already has a finished record` },
  });
  expect(settled[2]).toMatchObject({
    status: 'rejected',
    reason: { message: 'account acct_missing does not exist' },
  });
  expect(settled[3]).toMatchObject({
    status: 'rejected',
    reason: { message: 'account acct_missing does not exist' },
  });
  expect(await storage.getAccount(account.id)).toMatchObject({ balanceMicros: 750 });
  expect(await storage.getRequestRecord('acct_missing', missing.id)).toBeNull();
  const ledger = await storage.listLedgerEntries(account.id);
  expect(ledger.map((entry) => entry.amountMicros)).toEqual([1_000, -250]);
  expect(await storage.listReservations(account.id, Date.now())).toHaveLength(2);

  // The failure a settle expects, a record already finished, is answered by the set-based batch
  // alone, and the batch's other calls settle in their order: the balance after each, the key's spend.
  const [first, second] = reserves as [typeof held, typeof held];
  if (!first.ok || !second.ok) throw new Error('refused');
  const late = requestRecord(account.id, { id: newId('gen'), keyId: key.id, costMicros: 100 });
  const free = requestRecord(account.id, { id: newId('gen'), keyId: key.id, costMicros: 0 });
  before = counter.count;
  const more = await Promise.allSettled([
    storage.settleRequest({ reservationId: null, record, charge }),
    storage.settleRequest({
      reservationId: second.reservation.id,
      record: late,
      charge: { ...charge, amountMicros: 100 },
    }),
    storage.settleRequest({ reservationId: null, record: free, charge: null }),
    storage.settleRequest({
      reservationId: null,
      record: requestRecord(account.id, { id: newId('gen'), keyId: key.id }),
      charge: { ...charge, amountMicros: 50 },
    }),
  ]);
  expect(counter.count - before).toBe(1);
  expect(more.map((r) => (r.status === 'fulfilled' ? r.value.balanceMicros : r.reason.message))).toEqual([
    `request ${record.id} already has a finished record`,
    650,
    650,
    600,
  ]);
  expect(
    (await storage.listLedgerEntries(account.id)).map((e) => [e.amountMicros, e.balanceAfterMicros]),
  ).toEqual([
    [1_000, 1_000],
    [-250, 750],
    [-100, 650],
    [-50, 600],
  ]);
  expect(await storage.getApiKey(account.id, key.id)).toMatchObject({ spentMicros: 400 });
  expect(await storage.listReservations(account.id, Date.now())).toHaveLength(1);

  // A settle and a reserve of one turn: one statement (`tollgate_meter_batch`), the settle first,
  // so the reserve of 350 sees its hold of 300 freed and 400 left (before it, only 300 was free).
  const third = reserves[2]!;
  if (!third.ok) throw new Error('refused');
  before = counter.count;
  const [settledThird, reservedAgain] = await Promise.all([
    storage.settleRequest({
      reservationId: third.reservation.id,
      record: requestRecord(account.id, { id: newId('gen'), keyId: key.id, costMicros: 200 }),
      charge: { ...charge, amountMicros: 200 },
    }),
    reserve(350),
  ]);
  expect(counter.count - before).toBe(1);
  expect(settledThird).toEqual({ balanceMicros: 400 });
  expect(reservedAgain.ok).toBe(true);

  // Rate-limit hits of one turn (`tollgate_count_hits`): one statement, and exactly the limit admitted.
  const hit = (subject: string, limit: number) =>
    storage.hitRateLimit({ subject, limit, windowMs: 60_000, now: Date.now() });
  before = counter.count;
  const admitted = await Promise.all(Array.from({ length: 10 }, () => hit('key_a', 100)));
  expect(counter.count - before).toBe(1);
  expect(admitted.every((h) => h.allowed)).toBe(true);
  const mixed = await Promise.all(Array.from({ length: 10 }, (_, i) => hit(i % 2 ? 'key_b' : 'key_c', 3)));
  expect(mixed.filter((h) => h.allowed)).toHaveLength(6);
  expect(mixed.filter((h) => !h.allowed).every((h) => h.retryAfterMs > 0)).toBe(true);
}

/**
 * The set-based reserve refuses at a key's spend limit and at the monthly ceiling as the
 * single call does, with the same figures, counting the holds admitted earlier in the batch.
 */
async function batchLimits(harness: StorageHarness, counter: { count: number }) {
  const { storage } = harness;
  await Promise.all([1, 2, 3, 4].map(() => storage.ping()));
  const inOneTurn = ({ account, key }: Awaited<ReturnType<typeof meteredAccount>>, amounts: number[]) =>
    Promise.all(amounts.map((amountMicros) => reserveNew(storage, account.id, key.id, amountMicros)));
  const outcome = (r: Awaited<ReturnType<Storage['reserveCredit']>>) =>
    r.ok
      ? 'held'
      : r.reason === 'rate_limited'
        ? r
        : { reason: r.reason, availableMicros: r.availableMicros };

  const keyLimited = await meteredAccount(storage, { balanceMicros: 10_000, spendLimitMicros: 500 });
  let before = counter.count;
  expect((await inOneTurn(keyLimited, [200, 200, 200, 50])).map(outcome)).toEqual([
    'held',
    'held',
    { reason: 'key_limit_exceeded', availableMicros: 100 },
    'held',
  ]);
  expect(counter.count - before).toBe(1);

  const capped = await meteredAccount(storage, { balanceMicros: 10_000, monthlyLimitMicros: 450 });
  before = counter.count;
  expect((await inOneTurn(capped, [200, 200, 200])).map(outcome)).toEqual([
    'held',
    'held',
    { reason: 'monthly_limit_exceeded', availableMicros: 50 },
  ]);
  expect(counter.count - before).toBe(1);
}

describe('postgres group commit of reserve and settle', () => {
  it('PGlite: a batch refuses at the key limit and the monthly ceiling as one call would', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const harness = await pgliteHarness(pglite);
    cleanups.push(() => harness.close());
    await batchLimits(harness, countPgliteStatements(pglite));
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)(
    'server: a batch refuses at the key limit and the monthly ceiling as one call would',
    async () => {
      const harness = await postgresHarness(process.env.TEST_DATABASE_URL!);
      cleanups.push(() => harness.close());
      await batchLimits(harness, countPgStatements());
    },
  );

  it('PGlite: one statement per turn; limits exact; a failing call fails alone', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const harness = await pgliteHarness(pglite);
    cleanups.push(() => harness.close());
    await batchSemantics(harness, countPgliteStatements(pglite));
  });

  const databaseUrl = process.env.TEST_DATABASE_URL;
  it.skipIf(!databaseUrl)(
    'server: one statement per turn; limits exact; a failing call fails alone',
    async () => {
      const harness = await postgresHarness(databaseUrl!);
      cleanups.push(() => harness.close());
      await batchSemantics(harness, countPgStatements());
    },
  );

  it.skipIf(!databaseUrl)(
    'server: two processes batching the same accounts in opposite orders never deadlock',
    async () => {
      const harness = await postgresHarness(databaseUrl!);
      cleanups.push(() => harness.close());
      const second = await harness.openSecond!();
      cleanups.push(() => second.close());
      const a = await meteredAccount(harness.storage, { balanceMicros: 1_000_000_000, name: 'group commit' });
      const b = await meteredAccount(harness.storage, { balanceMicros: 1_000_000_000, name: 'group commit' });
      const round = (storage: Storage, order: (typeof a)[]) =>
        Promise.all(
          order.map(async ({ account, key }) => {
            const requestId = newId('gen');
            const record = requestRecord(account.id, { id: requestId, keyId: key.id, costMicros: 1 });
            const held = await storage.reserveCredit({
              accountId: account.id,
              keyId: key.id,
              requestId,
              amountMicros: 10,
              now: Date.now(),
              ttlMs: 60_000,
              record: { ...record, status: 'in_progress' },
            });
            if (!held.ok) throw new Error('refused');
            await storage.settleRequest({
              reservationId: held.reservation.id,
              record,
              charge: { amountMicros: 1, description: 'd', keyId: key.id },
            });
          }),
        );
      for (let i = 0; i < 30; i++) {
        await Promise.all([round(harness.storage, [a, b, a, b, a, b]), round(second, [b, a, b, a, b, a])]);
      }
      for (const { account } of [a, b]) {
        expect(await harness.storage.getAccount(account.id)).toMatchObject({
          balanceMicros: 1_000_000_000 - 180,
        });
      }
    },
  );
});
