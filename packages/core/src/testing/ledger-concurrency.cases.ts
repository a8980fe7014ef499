import { describe, expect, it } from 'vitest';
import type { LedgerEntry, NewLedgerEntry, Storage } from '../storage/types.js';
import { charge, credit, fee } from './fixtures.js';
import { rawBalance, rawLedgerSum, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

const WRITERS = 64;
const SEED = 1_000_000_000;

/**
 * 64 batches mixing credits, charges and fees; a quarter single credits, a quarter single
 * charges, the rest two- and three-entry batches. Amounts vary so a lost update cannot cancel out.
 */
function mixedBatches(count: number): NewLedgerEntry[][] {
  return Array.from({ length: count }, (_, i) => {
    switch (i % 4) {
      case 0:
        return [credit(100_000 + i * 7)];
      case 1:
        return [charge(1_000 + i * 13)];
      case 2:
        return [charge(500 + i), fee(17 + i)];
      default:
        return [credit(250_000 + i), fee(2_500 + i), charge(31 * i + 1)];
    }
  });
}

const sumOf = (amounts: number[]) => amounts.reduce((total, amount) => total + amount, 0);

/**
 * Where the (amount, balance_after) pairs fail to be one serial chain from `start` to `final`:
 * in a chain every entry's balance before (after - amount) is the balance after exactly one other
 * entry (or the start), and only the final balance is built on by nobody. That is the degree
 * condition of a path through all entries: it holds for any serial order, so it is safe under
 * concurrency, and it breaks when two writers read the same balance (a lost update leaves one
 * balance built on twice). Returns the balances built on too often (surplus < 0) or too rarely.
 */
function chainBreaks(rows: { amount: number; after: number }[], start: number, final: number) {
  const open = new Map<number, number>();
  const bump = (balance: number, by: number) => open.set(balance, (open.get(balance) ?? 0) + by);
  bump(start, 1);
  bump(final, -1);
  for (const { amount, after } of rows) {
    bump(after, 1);
    bump(after - amount, -1);
  }
  return [...open].filter(([, surplus]) => surplus !== 0).map(([balance, surplus]) => ({ balance, surplus }));
}

async function rawChain(ctx: ConformanceContext, accountId: string) {
  const rows = await ctx.raw(
    `SELECT amount_micros, balance_after_micros FROM ledger_entries WHERE account_id = ${sqlText(accountId)}`,
  );
  return rows.map((row) => ({
    amount: toNumber(row.amount_micros),
    after: toNumber(row.balance_after_micros),
  }));
}

/** Each returned batch is internally a chain, and its balance is its last entry's. */
function expectBatchChains(
  result: { entries: LedgerEntry[]; balanceMicros: number },
  batch: NewLedgerEntry[],
) {
  expect(result.entries.map((entry) => entry.amountMicros)).toEqual(batch.map((entry) => entry.amountMicros));
  for (let j = 1; j < result.entries.length; j++) {
    const { balanceAfterMicros, amountMicros } = result.entries[j]!;
    expect(balanceAfterMicros).toBe(result.entries[j - 1]!.balanceAfterMicros + amountMicros);
  }
  expect(result.balanceMicros).toBe(result.entries.at(-1)!.balanceAfterMicros);
}

export function ledgerConcurrencyCases(ctx: ConformanceContext): void {
  describe('ledger under concurrency', () => {
    it(`appendLedgerEntries - keeps balance == Σ ledger under ${WRITERS} concurrent writers (half through a second storage when there is one)`, async () => {
      const second = await ctx.harness.openSecond?.();
      try {
        const account = await ctx.storage.createAccount({ name: 'busy' });
        await ctx.storage.appendLedgerEntries(account.id, [credit(SEED)]);
        const batches = mixedBatches(WRITERS);
        const via = (i: number): Storage => (second && i % 2 === 1 ? second : ctx.storage);

        const results = await Promise.all(
          batches.map((batch, i) => via(i).appendLedgerEntries(account.id, batch)),
        );

        for (const [i, batch] of batches.entries()) expectBatchChains(results[i]!, batch);
        const expected = SEED + sumOf(batches.flat().map((entry) => entry.amountMicros));
        expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(expected);
        if (second) expect((await second.getAccount(account.id))?.balanceMicros).toBe(expected);
        expect(await rawBalance(ctx, account.id)).toBe(expected);
        expect(await rawLedgerSum(ctx, account.id)).toBe(expected);

        const chain = await rawChain(ctx, account.id);
        expect(chain).toHaveLength(1 + batches.flat().length);
        expect(chainBreaks(chain, 0, expected)).toEqual([]);
      } finally {
        await second?.close();
      }
    });

    it('listLedgerEntries - lists concurrently written entries in applied order (each balance = previous + amount)', async () => {
      const account = await ctx.storage.createAccount({ name: 'busy' });
      const seed = await ctx.storage.appendLedgerEntries(account.id, [credit(SEED)]);
      const batches = mixedBatches(WRITERS);
      const results = await Promise.all(
        batches.map((batch) => ctx.storage.appendLedgerEntries(account.id, batch)),
      );

      const listed = await ctx.storage.listLedgerEntries(account.id);
      expect(listed[0]).toEqual(seed.entries[0]);
      const written = results.flatMap((result) => result.entries);
      expect(new Set(listed.slice(1).map((entry) => entry.id))).toEqual(
        new Set(written.map((entry) => entry.id)),
      );
      expect(listed).toHaveLength(1 + written.length);
      for (let i = 1; i < listed.length; i++) {
        expect(listed[i]!.balanceAfterMicros, `entry ${i} of ${listed.length}`).toBe(
          listed[i - 1]!.balanceAfterMicros + listed[i]!.amountMicros,
        );
      }
    });

    it('appendLedgerEntries - concurrent writers on different accounts keep each balance to its own ledger', async () => {
      const accounts = await Promise.all(['a', 'b', 'c'].map((name) => ctx.storage.createAccount({ name })));
      const batches = mixedBatches(WRITERS).map((batch) => [credit(SEED), ...batch]);

      await Promise.all(
        batches.map((batch, i) => ctx.storage.appendLedgerEntries(accounts[i % accounts.length]!.id, batch)),
      );

      for (const [n, account] of accounts.entries()) {
        const mine = batches.filter((_, i) => i % accounts.length === n).flat();
        const expected = sumOf(mine.map((entry) => entry.amountMicros));
        expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(expected);
        expect(await rawBalance(ctx, account.id)).toBe(expected);
        expect(await rawLedgerSum(ctx, account.id)).toBe(expected);
        expect(chainBreaks(await rawChain(ctx, account.id), 0, expected)).toEqual([]);
      }
    });

    it("openSecond - a second storage on the same database sees the first one's writes at once", async (test) => {
      const { openSecond } = ctx.harness;
      if (!openSecond) return test.skip('this harness has no second storage (one connection only)');
      const second = await openSecond.call(ctx.harness);
      try {
        const account = await ctx.storage.createAccount({ name: 'shared' });
        await ctx.storage.appendLedgerEntries(account.id, [credit(5_000)]);
        expect(await second.getAccount(account.id)).toEqual(await ctx.storage.getAccount(account.id));
        await second.appendLedgerEntries(account.id, [charge(1_000)]);
        expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(4_000);
        expect(await second.listLedgerEntries(account.id)).toEqual(
          await ctx.storage.listLedgerEntries(account.id),
        );
      } finally {
        await second.close();
      }
    });
  });
}
