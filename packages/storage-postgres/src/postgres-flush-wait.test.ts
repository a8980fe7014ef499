import { PGlite } from '@electric-sql/pglite';
import { newId, type Storage } from '@tollgate/core';
import { meteredAccount, requestRecord } from '@tollgate/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPgliteStorage } from './index.js';
import { postgresHarness } from './test-harness.js';

/*
 * Which metering statements wait for their WAL flush at COMMIT: a statement that only takes holds
 * does not (it sets `synchronous_commit = off` for its own transaction), and one that settles always
 * does, alone or together with holds in one batch. Each metering statement the storage sends is run
 * here inside an explicit transaction (it still commits what it wrote), and the transaction's
 * `synchronous_commit` is read just before its COMMIT: the setting that COMMIT obeys.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  vi.restoreAllMocks();
});

type Run = (text: string, values?: unknown[]) => Promise<unknown>;
/** What `synchronous_commit` each metering statement's COMMIT saw, in the order sent. */
type Seen = string[];

/** Runs `statement` between BEGIN and COMMIT on the same session, noting the setting before COMMIT. */
async function observed<T>(run: Run, seen: Seen, statement: () => Promise<T>): Promise<T> {
  await run('BEGIN');
  try {
    const result = await statement();
    const shown = (await run('SHOW synchronous_commit')) as { rows: { synchronous_commit: string }[] };
    seen.push(shown.rows[0]!.synchronous_commit);
    await run('COMMIT');
    return result;
  } catch (error) {
    await run('ROLLBACK');
    throw error;
  }
}

const isMetering = (text: unknown) => typeof text === 'string' && /\btollgate_\w+\(/.test(text);

/** Each step's settings, from a warm account, through `storage`. */
async function settingsByStep(storage: Storage, seen: Seen): Promise<Record<string, Seen>> {
  const { account, key } = await meteredAccount(storage, { balanceMicros: 1_000_000, name: 'flush wait' });
  const out: Record<string, Seen> = {};
  const step = async <T>(name: string, run: () => Promise<T>): Promise<T> => {
    const from = seen.length;
    const result = await run();
    out[name] = seen.slice(from);
    return result;
  };
  const now = Date.now();
  const reserve = (requestId = newId('gen'), rateLimit = false) =>
    storage.reserveCredit({
      accountId: account.id,
      keyId: key.id,
      requestId,
      amountMicros: 5_000,
      now,
      ttlMs: 60_000,
      record: { ...requestRecord(account.id, { id: requestId, keyId: key.id }), status: 'in_progress' },
      ...(rateLimit ? { rateLimit: { subject: `key:${key.id}`, limit: 100, windowMs: 60_000, now } } : {}),
    });
  const held = async (requestId: string) => {
    const result = await reserve(requestId);
    if (!result.ok) throw new Error('the hold was refused');
    return result.reservation.id;
  };
  const settle = (requestId: string, reservationId: string) =>
    storage.settleRequest({
      reservationId,
      record: requestRecord(account.id, { id: requestId, keyId: key.id, costMicros: 1_000 }),
      charge: { amountMicros: 1_000, description: 'd', keyId: key.id },
    });

  const first = newId('gen');
  const firstHold = await step('a lone reserve', () => held(first));
  await step('a lone settle', () => settle(first, firstHold));
  await step('a reserve with its rate-limit hit', () => reserve(newId('gen'), true));
  const [a, b] = [newId('gen'), newId('gen')];
  const holds = await step('two reserves in one turn', () => Promise.all([held(a), held(b)]));
  await step('a settle and a reserve in one turn', () => Promise.all([settle(a, holds[0]), reserve()]));
  await step('a settle and a reserve with its hit in one turn', () =>
    Promise.all([settle(b, holds[1]), reserve(newId('gen'), true)]),
  );
  expect(await storage.getAccount(account.id)).toMatchObject({ balanceMicros: 1_000_000 - 3 * 1_000 });
  return out;
}

const EXPECTED = {
  'a lone reserve': ['off'],
  'a lone settle': ['on'],
  'a reserve with its rate-limit hit': ['off'],
  'two reserves in one turn': ['off'],
  'a settle and a reserve in one turn': ['on'],
  'a settle and a reserve with its hit in one turn': ['on'],
};

describe('postgres metering statements and the WAL flush', () => {
  it('PGlite: holds alone commit without waiting for the flush; anything that settles waits', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const storage = await createPgliteStorage({ pglite, schema: 'flush_wait' });
    const seen: Seen = [];
    const query = pglite.query.bind(pglite);
    const run: Run = (text, values) => query(text, values);
    pglite.query = ((text: string, values?: unknown[], options?: never) =>
      isMetering(text)
        ? observed(run, seen, () => query(text, values, options))
        : query(text, values, options)) as typeof pglite.query;
    expect(await settingsByStep(storage, seen)).toEqual(EXPECTED);
  });

  const databaseUrl = process.env.TEST_DATABASE_URL;
  it.skipIf(!databaseUrl)(
    'server at TEST_DATABASE_URL: holds alone commit without waiting for the flush; anything that settles waits',
    async () => {
      const harness = await postgresHarness(databaseUrl!);
      cleanups.push(() => harness.close());
      const seen: Seen = [];
      const query = pg.Client.prototype.query;
      vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (
        this: pg.Client,
        ...args: unknown[]
      ) {
        const apply = () => (query as (...a: unknown[]) => Promise<unknown>).apply(this, args);
        const config = args[0] as string | { text?: string };
        const text = typeof config === 'string' ? config : config?.text;
        if (!isMetering(text)) return apply();
        const run: Run = (sql) => (query as (...a: unknown[]) => Promise<unknown>).call(this, sql);
        return observed(run, seen, apply);
      } as typeof query);
      expect(await settingsByStep(harness.storage, seen)).toEqual(EXPECTED);
    },
  );
});
