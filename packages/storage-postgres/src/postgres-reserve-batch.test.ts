import { PGlite } from '@electric-sql/pglite';
import { newId } from '@tollgate/core';
import { meteredAccount, newKeyInput, type StorageHarness } from '@tollgate/core/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { pgliteHarness, postgresHarness } from './test-harness.js';

/*
 * Migration 0019's `tollgate_reserve_batch` keeps an account's holds in running totals and inserts
 * the batch's holds together, so the cases where a total must be read again are tested here against
 * the per-call function (0011's `tollgate_reserve_credits`, each call through 0010's
 * `tollgate_reserve_credit`), which reads the table afresh for every call: a hold expiring between
 * two calls' instants, one of the batch's own holds expiring so, a call stamped before the totals
 * were read, and accounts interleaved. Both run on the same database state (each in a transaction
 * rolled back), and must answer the same rows; the batch run once more for real must leave exactly
 * the holds it admitted.
 */

let shared: PGlite | undefined;
afterAll(() => shared?.close());
const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const databaseUrl = process.env.TEST_DATABASE_URL;
const variants: { name: string; skip?: string; open: () => Promise<StorageHarness> }[] = [
  {
    name: 'PGlite',
    open: async () => {
      shared ??= await PGlite.create();
      return pgliteHarness(shared);
    },
  },
  {
    name: 'server',
    ...(databaseUrl ? {} : { skip: 'TEST_DATABASE_URL is not set' }),
    open: () => postgresHarness(databaseUrl!),
  },
];

/** A call as `native-metering-queries.ts` sends it, without a record. */
interface Call {
  account_id: string;
  key_id: string;
  amount: number;
  now: number;
  month_start: number;
  hold_id: string;
  request_id: string;
  expires_at: number;
  record: null;
}

const T = Date.UTC(2026, 10, 28, 12);
const MONTH_START = Date.UTC(2026, 10, 1);

function call(
  account: { id: string },
  key: { id: string },
  amount: number,
  at: number,
  ttlMs = 60_000,
): Call {
  return {
    account_id: account.id,
    key_id: key.id,
    amount,
    now: T + at,
    month_start: MONTH_START,
    hold_id: newId('res'),
    request_id: newId('req'),
    expires_at: T + at + ttlMs,
    record: null,
  };
}

const quote = (calls: Call[]) => `'${JSON.stringify(calls).replaceAll("'", "''")}'::jsonb`;

/** A hold taken before the batch, live until `expiresAt`. */
async function holdUntil(
  harness: StorageHarness,
  account: { id: string },
  key: { id: string },
  amountMicros: number,
  expiresAt: number,
) {
  const now = expiresAt - 1_000;
  const held = await harness.storage.reserveCredit({
    accountId: account.id,
    keyId: key.id,
    requestId: newId('req'),
    amountMicros,
    now,
    ttlMs: expiresAt - now,
  });
  expect(held.ok).toBe(true);
}

/** What a reserve function answers per call, in call order. */
async function answers(harness: StorageHarness, fn: string, calls: Call[], keep = false) {
  await harness.raw('BEGIN');
  try {
    return await harness.raw(
      `SELECT ord, refusal, balance::text, available::text, error FROM ${fn}(${quote(calls)}) ORDER BY ord`,
    );
  } finally {
    await harness.raw(keep ? 'COMMIT' : 'ROLLBACK');
  }
}

/** The batch's answers, which must equal the per-call function's; then the batch for real. */
async function batchLikePerCall(harness: StorageHarness, calls: Call[]) {
  const perCall = await answers(harness, 'tollgate_reserve_credits', calls);
  const batch = await answers(harness, 'tollgate_reserve_batch', calls);
  expect(batch).toEqual(perCall);
  expect(await answers(harness, 'tollgate_reserve_batch', calls, true)).toEqual(perCall);
  const admitted = calls.filter((_, i) => perCall[i]!.refusal === null).map((c) => c.hold_id);
  const holds = await harness.raw(
    `SELECT id FROM credit_reservations WHERE id IN (${calls.map((c) => `'${c.hold_id}'`).join(', ')})`,
  );
  expect(holds.map((h) => h.id).sort()).toEqual([...admitted].sort());
  return batch.map((row) => row.refusal ?? `held`);
}

for (const variant of variants) {
  describe.skipIf(variant.skip !== undefined)(`tollgate_reserve_batch (${variant.name})`, () => {
    async function open() {
      const harness = await variant.open();
      cleanups.push(() => harness.close());
      return harness;
    }

    it('a hold summed for an earlier call that expires before a later one no longer counts for it', async () => {
      const harness = await open();
      const { account, key } = await meteredAccount(harness.storage, { balanceMicros: 1_000 });
      await holdUntil(harness, account, key, 600, T + 5);
      const calls = [call(account, key, 300, 0), call(account, key, 600, 10), call(account, key, 200, 20)];
      expect(await batchLikePerCall(harness, calls)).toEqual(['held', 'held', 'insufficient_credit']);
    });

    it("a hold admitted by the batch itself that expires before a later call's instant no longer counts", async () => {
      const harness = await open();
      const { account, key } = await meteredAccount(harness.storage, { balanceMicros: 1_000 });
      const calls = [call(account, key, 600, 0, 5), call(account, key, 600, 10), call(account, key, 600, 20)];
      expect(await batchLikePerCall(harness, calls)).toEqual(['held', 'held', 'insufficient_credit']);
    });

    it('a call stamped before the instant the totals were read counts the holds live at its own instant', async () => {
      const harness = await open();
      const { account, key } = await meteredAccount(harness.storage, { balanceMicros: 1_000 });
      await holdUntil(harness, account, key, 600, T + 5);
      const calls = [call(account, key, 500, 10), call(account, key, 400, 0), call(account, key, 400, 30)];
      expect(await batchLikePerCall(harness, calls)).toEqual(['held', 'insufficient_credit', 'held']);
    });

    it("accounts interleaved in one batch each count the holds the batch gave them, and keys' limits their own", async () => {
      const harness = await open();
      const a = await meteredAccount(harness.storage, { balanceMicros: 2_000, spendLimitMicros: 700 });
      const b = await meteredAccount(harness.storage, { balanceMicros: 1_000 });
      const second = await harness.storage.createApiKey((await newKeyInput(a.account.id)).input);
      const calls = [
        call(a.account, a.key, 600, 0),
        call(b.account, b.key, 900, 1),
        call(a.account, second, 300, 2),
        call(a.account, a.key, 200, 3),
        call(b.account, b.key, 200, 4),
        call(a.account, second, 100, 5),
      ];
      expect(await batchLikePerCall(harness, calls)).toEqual([
        'held',
        'held',
        'held',
        'key_limit_exceeded',
        'insufficient_credit',
        'held',
      ]);
    });
  });
}
