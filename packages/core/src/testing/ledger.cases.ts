import { describe, expect, it } from 'vitest';
import type { NewLedgerEntry } from '../storage/types.js';
import { charge, credit, expectRecentEpochMs, fee, fundedAccount, ID_PATTERN } from './fixtures.js';
import { rawBalance, rawCount, rawLedgerSum, rawOne, sqlText, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** Three billion micros: past int4, so a narrow column or an unconverted int8 string shows. */
const BIG_CREDIT = 3_000_000_000;

export function ledgerCases(ctx: ConformanceContext): void {
  const ledgerCount = (accountId: string) =>
    rawCount(ctx, 'ledger_entries', `account_id = ${sqlText(accountId)}`);

  describe('ledger', () => {
    it('appendLedgerEntries - applies entries in order, each with the balance after it', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const key = await ctx.storage.createApiKey({
        accountId: account.id,
        name: 'k',
        scope: 'inference',
        env: 'live',
        hash: 'a'.repeat(64),
        prefix: 'gw_live_aaaaaa',
      });
      const entries: NewLedgerEntry[] = [
        credit(BIG_CREDIT),
        fee(150_000),
        {
          amountMicros: -1_234,
          kind: 'charge',
          description: 'm: 1 in, 2 out',
          requestId: 'req_1',
          keyId: key.id,
        },
        { amountMicros: 99, kind: 'adjustment', description: 'correction', requestId: null, keyId: null },
      ];

      const result = await ctx.storage.appendLedgerEntries(account.id, entries);

      const afters = [BIG_CREDIT, BIG_CREDIT - 150_000, BIG_CREDIT - 151_234, BIG_CREDIT - 151_135];
      expect(result.balanceMicros).toBe(afters[3]);
      expect(result.entries).toEqual(
        entries.map((entry, i) => ({
          id: expect.stringMatching(ID_PATTERN.ledger),
          accountId: account.id,
          amountMicros: entry.amountMicros,
          balanceAfterMicros: afters[i],
          kind: entry.kind,
          description: entry.description,
          requestId: entry.requestId ?? null,
          keyId: entry.keyId ?? null,
          createdAt: expect.any(Number),
        })),
      );
      expect(result.entries.every((entry) => expectRecentEpochMs(entry.createdAt))).toBe(true);
      expect(new Set(result.entries.map((entry) => entry.id)).size).toBe(4);

      for (const [i, entry] of result.entries.entries()) {
        const row = await rawOne(ctx, `SELECT * FROM ledger_entries WHERE id = ${sqlText(entry.id)}`);
        expect(row.account_id).toBe(account.id);
        expect(toNumber(row.amount_micros)).toBe(entries[i]!.amountMicros);
        expect(toNumber(row.balance_after_micros)).toBe(afters[i]);
        expect(row.kind).toBe(entries[i]!.kind);
        expect(row.request_id).toBe(entries[i]!.requestId ?? null);
        expect(row.key_id).toBe(entries[i]!.keyId ?? null);
      }
    });

    it('appendLedgerEntries - moves the cached balance so balance == Σ ledger (raw)', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      await ctx.storage.appendLedgerEntries(account.id, [credit(BIG_CREDIT)]);
      await ctx.storage.appendLedgerEntries(account.id, [charge(700), charge(300)]);
      const last = await ctx.storage.appendLedgerEntries(account.id, [fee(1_000_000)]);

      const expected = BIG_CREDIT - 1_001_000;
      expect(last.balanceMicros).toBe(expected);
      expect(last.entries[0]?.balanceAfterMicros).toBe(expected);
      expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(expected);
      expect(await rawBalance(ctx, account.id)).toBe(expected);
      expect(await rawLedgerSum(ctx, account.id)).toBe(expected);
    });

    it('appendLedgerEntries - never touches another account', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const bystander = await fundedAccount(ctx.storage, 5_000);
      await ctx.storage.appendLedgerEntries(account.id, [credit(1_000)]);
      expect((await ctx.storage.getAccount(bystander.id))?.balanceMicros).toBe(5_000);
      expect(await ledgerCount(bystander.id)).toBe(1);
    });

    const invalidBatches: [string, NewLedgerEntry[]][] = [
      ['a zero amount', [credit(1_000), { amountMicros: 0, kind: 'charge', description: 'zero' }]],
      ['a non-integer amount', [credit(1_000), { amountMicros: -1.5, kind: 'charge', description: 'float' }]],
      ['a NaN amount', [credit(1_000), { amountMicros: Number.NaN, kind: 'charge', description: 'nan' }]],
    ];
    for (const [what, batch] of invalidBatches) {
      it(`appendLedgerEntries - rejects a batch with ${what} and writes none of it`, async () => {
        const account = await fundedAccount(ctx.storage, 10_000);
        await expect(ctx.storage.appendLedgerEntries(account.id, batch)).rejects.toThrow();
        expect(await ledgerCount(account.id)).toBe(1);
        expect(await rawBalance(ctx, account.id)).toBe(10_000);
        expect((await ctx.storage.getAccount(account.id))?.balanceMicros).toBe(10_000);
      });
    }

    it('appendLedgerEntries - rejects a missing account and writes nothing', async () => {
      await expect(ctx.storage.appendLedgerEntries('acct_doesnotexist', [credit(1_000)])).rejects.toThrow();
      expect(await rawCount(ctx, 'ledger_entries')).toBe(0);
    });

    it('appendLedgerEntries - rejects an empty list', async () => {
      const account = await fundedAccount(ctx.storage, 10_000);
      await expect(ctx.storage.appendLedgerEntries(account.id, [])).rejects.toThrow();
      expect(await ledgerCount(account.id)).toBe(1);
      expect(await rawBalance(ctx, account.id)).toBe(10_000);
    });

    it('listLedgerEntries - lists the account ledger oldest first, in applied order', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const other = await fundedAccount(ctx.storage, 1);
      const first = await ctx.storage.appendLedgerEntries(account.id, [credit(10_000)]);
      const second = await ctx.storage.appendLedgerEntries(account.id, [
        charge(1),
        charge(2),
        charge(3),
        fee(4),
      ]);
      const third = await ctx.storage.appendLedgerEntries(account.id, [credit(5)]);
      await ctx.storage.appendLedgerEntries(other.id, [credit(7)]);

      expect(await ctx.storage.listLedgerEntries(account.id)).toEqual([
        ...first.entries,
        ...second.entries,
        ...third.entries,
      ]);
    });

    it('listLedgerEntries - returns an empty list for an account without entries', async () => {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      expect(await ctx.storage.listLedgerEntries(account.id)).toEqual([]);
    });
  });

  describe('ledger is append-only in the database', () => {
    async function oneEntry() {
      const account = await ctx.storage.createAccount({ name: 'Acme' });
      const { entries } = await ctx.storage.appendLedgerEntries(account.id, [credit(10_000)]);
      const id = entries[0]!.id;
      const read = () => rawOne(ctx, `SELECT * FROM ledger_entries WHERE id = ${sqlText(id)}`);
      return { account, id, before: await read(), read };
    }

    it('a raw UPDATE of a ledger row is rejected by the database and the row is unchanged', async () => {
      const { id, before, read } = await oneEntry();
      await expect(
        ctx.raw(`UPDATE ledger_entries SET amount_micros = 999 WHERE id = ${sqlText(id)}`),
      ).rejects.toThrow();
      await expect(
        ctx.raw(`UPDATE ledger_entries SET description = 'edited' WHERE id = ${sqlText(id)}`),
      ).rejects.toThrow();
      expect(await read()).toEqual(before);
    });

    it('a raw DELETE of ledger rows is rejected by the database and the rows remain', async () => {
      const { account, id, before, read } = await oneEntry();
      await expect(ctx.raw(`DELETE FROM ledger_entries WHERE id = ${sqlText(id)}`)).rejects.toThrow();
      await expect(ctx.raw('DELETE FROM ledger_entries')).rejects.toThrow();
      expect(await read()).toEqual(before);
      expect(await ledgerCount(account.id)).toBe(1);
    });
  });
}
