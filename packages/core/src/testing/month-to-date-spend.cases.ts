import { describe, expect, it } from 'vitest';
import { charge, credit, fee, fundedAccount } from './fixtures.js';
import { sqlText } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/**
 * Entries are stamped with the storage's own clock, so the month boundaries are tested by moving
 * `at` around the month that contains a real entry, not by back-dating entries.
 */
export function monthToDateSpendCases(ctx: ConformanceContext): void {
  /** The spend as a number; a `-0` from negating an empty sum reads as 0 (it serialises as 0). */
  const spendAt = async (accountId: string, at: number): Promise<number> => {
    const spend = await ctx.storage.getMonthToDateSpend(accountId, at);
    return Object.is(spend, -0) ? 0 : spend;
  };

  describe('getMonthToDateSpend', () => {
    async function accountWithSpend() {
      const account = await fundedAccount(ctx.storage, 10_000_000);
      const result = await ctx.storage.appendLedgerEntries(account.id, [
        charge(1_000),
        fee(300),
        charge(2_500),
        credit(50),
      ]);
      return { account, at: result.entries[0]!.createdAt };
    }

    it('getMonthToDateSpend - sums only the charge entries, as a positive number', async () => {
      const { account, at } = await accountWithSpend();
      const bystander = await fundedAccount(ctx.storage, 10_000_000, 'bystander');
      await ctx.storage.appendLedgerEntries(bystander.id, [charge(777_777)]);

      expect(await spendAt(account.id, at)).toBe(3_500);
    });

    it('getMonthToDateSpend - returns 0 when nothing was charged (credits and fees only, or no ledger)', async () => {
      const empty = await ctx.storage.createAccount({ name: 'empty' });
      expect(await spendAt(empty.id, Date.now())).toBe(0);

      const feesOnly = await fundedAccount(ctx.storage, 10_000_000, 'fees only');
      const { entries } = await ctx.storage.appendLedgerEntries(feesOnly.id, [fee(300), credit(20)]);
      expect(await spendAt(feesOnly.id, entries[0]!.createdAt)).toBe(0);
    });

    it('getMonthToDateSpend - counts the UTC month that contains `at`, from its first to its last millisecond', async () => {
      const { account, at } = await accountWithSpend();
      const day = new Date(at);
      const monthStart = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1);
      const nextMonthStart = Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1);
      const spend = (when: number) => spendAt(account.id, when);

      expect(await spend(monthStart)).toBe(3_500);
      expect(await spend(nextMonthStart - 1)).toBe(3_500);
      expect(await spend(monthStart - 1)).toBe(0);
      expect(await spend(nextMonthStart)).toBe(0);
    });

    it('getMonthToDateSpend - a charge counts in the UTC month of its created_at, at its first and last millisecond too (raw entries)', async () => {
      const account = await fundedAccount(ctx.storage, 10_000_000, 'edges');
      const december = Date.UTC(2031, 11, 1);
      const january = Date.UTC(2032, 0, 1);
      const february = Date.UTC(2032, 1, 1);
      const entries: [string, number, string, number][] = [
        ['led_edge_1', -1, 'charge', december - 1],
        ['led_edge_2', -20, 'charge', december],
        ['led_edge_3', -300, 'charge', january - 1],
        ['led_edge_4', -4_000, 'charge', january],
        ['led_edge_5', -50_000, 'charge', february - 1],
        ['led_edge_6', -600_000, 'fee', january + 5],
        ['led_edge_7', 7_000_000, 'credit', january + 6],
      ];
      await ctx.raw(
        `INSERT INTO ledger_entries
           (id, account_id, amount_micros, balance_after_micros, kind, description, request_id, key_id, created_at)
         VALUES ${entries
           .map(
             ([id, amount, kind, at]) =>
               `('${id}', ${sqlText(account.id)}, ${amount}, 0, '${kind}', 'raw', NULL, NULL, ${at})`,
           )
           .join(', ')}`,
      );

      expect(await spendAt(account.id, december - 1)).toBe(1);
      expect(await spendAt(account.id, december)).toBe(320);
      expect(await spendAt(account.id, january - 1)).toBe(320);
      expect(await spendAt(account.id, january)).toBe(54_000);
      expect(await spendAt(account.id, february - 1)).toBe(54_000);
      expect(await spendAt(account.id, february)).toBe(0);
    });

    it('getMonthToDateSpend - returns 0 for a month far from the charges', async () => {
      const { account } = await accountWithSpend();
      expect(await spendAt(account.id, Date.UTC(2000, 0, 15))).toBe(0);
      expect(await spendAt(account.id, Date.UTC(2099, 11, 31, 23, 59))).toBe(0);
    });
  });
}
