import { newId } from '@tollgate/core';
import { meteredAccount, newKeyInput, type StorageHarness } from '@tollgate/core/testing';
import { describe, expect, it } from 'vitest';
import { postgresTestBed } from './harness-variants.test-support.js';

/*
 * `tollgate_reserve_batch` keeps an account's holds in running totals and inserts the batch's holds
 * together, so the cases where a total must be read again are tested here against the per-call
 * function (`tollgate_reserve_credits`, each call through `tollgate_reserve_credit`), which reads the
 * table afresh for every call: a hold expiring between
 * two calls' instants, one of the batch's own holds expiring so, a call stamped before the totals
 * were read, and accounts interleaved. Both run on the same database state (each in a transaction
 * rolled back), and must answer the same rows; the batch run once more for real must leave exactly
 * the holds it admitted.
 */

const { variants } = postgresTestBed();

const T = Date.UTC(2026, 10, 28, 12);
const MONTH_START = Date.UTC(2026, 10, 1);

/** A call as `postgres-metering.ts` sends it, without a record. */
function call(account: { id: string }, key: { id: string }, amount: number, at: number, ttlMs = 60_000) {
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
type Call = ReturnType<typeof call>;

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

/**
 * Batches of one account with 1,000 µ$ (and, with `heldUntil`, a hold of 600 taken before them):
 * each call is `[amount, its instant after T, its hold's ttl]`.
 */
const ONE_ACCOUNT: {
  name: string;
  heldUntil?: number;
  calls: [number, number, number?][];
  answers: string[];
}[] = [
  {
    name: 'a hold summed for an earlier call that expires before a later one no longer counts for it',
    heldUntil: T + 5,
    calls: [
      [300, 0],
      [600, 10],
      [200, 20],
    ],
    answers: ['held', 'held', 'insufficient_credit'],
  },
  {
    name: "a hold admitted by the batch itself that expires before a later call's instant no longer counts",
    calls: [
      [600, 0, 5],
      [600, 10],
      [600, 20],
    ],
    answers: ['held', 'held', 'insufficient_credit'],
  },
  {
    name: 'a call stamped before the instant the totals were read counts the holds live at its own instant',
    heldUntil: T + 5,
    calls: [
      [500, 10],
      [400, 0],
      [400, 30],
    ],
    answers: ['held', 'insufficient_credit', 'held'],
  },
];

for (const variant of variants) {
  describe.skipIf(variant.skip !== undefined)(`tollgate_reserve_batch (${variant.name})`, () => {
    const open = () => variant.open();

    for (const example of ONE_ACCOUNT) {
      it(example.name, async () => {
        const harness = await open();
        const { account, key } = await meteredAccount(harness.storage, { balanceMicros: 1_000 });
        if (example.heldUntil !== undefined) await holdUntil(harness, account, key, 600, example.heldUntil);
        const calls = example.calls.map(([amount, at, ttlMs]) => call(account, key, amount, at, ttlMs));
        expect(await batchLikePerCall(harness, calls)).toEqual(example.answers);
      });
    }

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
