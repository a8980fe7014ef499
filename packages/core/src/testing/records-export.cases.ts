import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../storage/metering-types.js';
import type { RecordCursor } from '../storage/records-export.js';
import type { LedgerEntry, NewLedgerEntry } from '../storage/types.js';
import { charge, credit, fee } from './fixtures.js';
import { requestRecord } from './metering-fixtures.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = Date.UTC(2024, 4, 1, 12);

export function recordsExportCases(ctx: ConformanceContext): void {
  /** Every record of the account from `since` on, read `limit` at a time. */
  async function readAllRecords(accountId: string, since: number, limit: number) {
    const all: RequestRecord[] = [];
    let before: RecordCursor | undefined;
    let pages = 0;
    for (;;) {
      const page = await ctx.storage.listRequestRecordsPage(accountId, {
        since,
        limit,
        ...(before && { before }),
      });
      pages++;
      expect(page.length).toBeLessThanOrEqual(limit);
      all.push(...page);
      if (page.length < limit) return { all, pages };
      const last = page[page.length - 1]!;
      before = { createdAt: last.createdAt, id: last.id };
    }
  }

  /** Every entry of the account's ledger, read `limit` at a time through the `after` cursor. */
  async function readAllLedger(accountId: string, limit: number) {
    const all: LedgerEntry[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await ctx.storage.listLedgerPage(accountId, { limit, ...(after && { after }) });
      if (!page) throw new Error('the cursor was refused');
      expect(page.entries.length).toBeLessThanOrEqual(limit);
      all.push(...page.entries);
      if (!page.hasMore) return all;
      after = page.entries[page.entries.length - 1]!.id;
    }
  }

  describe('records export', () => {
    it('listRequestRecordsPage - newest first by (createdAt, id), pages lose and repeat nothing across same-millisecond rows', async () => {
      const account = await ctx.storage.createAccount({ name: 'export' });
      // 3 records per millisecond over 5 milliseconds, inserted in a shuffled order.
      const records: RequestRecord[] = [];
      for (let ms = 0; ms < 5; ms++) {
        for (const suffix of ['b', 'c', 'a']) {
          records.push(requestRecord(account.id, { id: `req_${ms}${suffix}`, createdAt: T0 + ms }));
        }
      }
      for (const record of [...records].reverse()) await ctx.storage.insertRequestRecord(record);
      const expected = records
        .map((r) => r.id)
        .sort()
        .reverse();

      for (const limit of [1, 2, 4, 15, 50]) {
        const { all } = await readAllRecords(account.id, T0, limit);
        expect(all.map((r) => r.id)).toEqual(expected);
      }
      const { all } = await readAllRecords(account.id, T0, 4);
      expect(all[0]).toEqual(records.find((r) => r.id === 'req_4c'));
    });

    it('listRequestRecordsPage - keeps records created at or after `since`, and only the account’s', async () => {
      const mine = await ctx.storage.createAccount({ name: 'mine' });
      const theirs = await ctx.storage.createAccount({ name: 'theirs' });
      await ctx.storage.insertRequestRecord(requestRecord(mine.id, { id: 'req_old', createdAt: T0 - 1 }));
      await ctx.storage.insertRequestRecord(requestRecord(mine.id, { id: 'req_edge', createdAt: T0 }));
      await ctx.storage.insertRequestRecord(requestRecord(mine.id, { id: 'req_new', createdAt: T0 + 10 }));
      await ctx.storage.insertRequestRecord(
        requestRecord(theirs.id, { id: 'req_theirs', createdAt: T0 + 5 }),
      );

      const page = await ctx.storage.listRequestRecordsPage(mine.id, { since: T0, limit: 10 });
      expect(page.map((r) => r.id)).toEqual(['req_new', 'req_edge']);
      const after = await ctx.storage.listRequestRecordsPage(mine.id, {
        since: T0,
        limit: 10,
        before: { createdAt: T0 + 10, id: 'req_new' },
      });
      expect(after.map((r) => r.id)).toEqual(['req_edge']);
      const theirsPage = await ctx.storage.listRequestRecordsPage(theirs.id, { since: 0, limit: 10 });
      expect(theirsPage.map((r) => r.id)).toEqual(['req_theirs']);
      expect(await ctx.storage.listRequestRecordsPage('acct_nobody', { since: 0, limit: 10 })).toEqual([]);
    });

    it('listLedgerPage - newest first in the order appended (same millisecond), has_more, and the exact balance after each', async () => {
      const account = await ctx.storage.createAccount({ name: 'ledger' });
      const batches: NewLedgerEntry[][] = [
        [credit(5_000_000), fee(250_000)],
        [charge(1_234), charge(99), { amountMicros: 7, kind: 'adjustment', description: 'fix' }],
        [credit(3_000_000_000), fee(1)],
      ];
      for (const entries of batches) await ctx.storage.appendLedgerEntries(account.id, entries);
      const oldestFirst = await ctx.storage.listLedgerEntries(account.id);
      expect(oldestFirst).toHaveLength(7);
      const expected = [...oldestFirst].reverse();

      for (const limit of [1, 2, 3, 7, 200]) {
        expect(await readAllLedger(account.id, limit)).toEqual(expected);
      }
      const first = await ctx.storage.listLedgerPage(account.id, { limit: 7 });
      expect(first?.hasMore).toBe(false);
      const short = await ctx.storage.listLedgerPage(account.id, { limit: 6 });
      expect(short?.hasMore).toBe(true);
      expect(short?.entries).toEqual(expected.slice(0, 6));

      // Each entry's balance after is the running sum of the chain up to it; the newest is the balance.
      let running = 0;
      for (const entry of oldestFirst) {
        running += entry.amountMicros;
        expect(entry.balanceAfterMicros).toBe(running);
      }
      expect(expected[0]!.balanceAfterMicros).toBe((await ctx.storage.getAccount(account.id))!.balanceMicros);
      expect(expected.map((e) => e.kind)).toEqual([
        'fee',
        'credit',
        'adjustment',
        'charge',
        'charge',
        'fee',
        'credit',
      ]);
    });

    it('listLedgerPage - another account’s entry or an unknown id is no cursor; another account’s entries never show', async () => {
      const mine = await ctx.storage.createAccount({ name: 'mine' });
      const theirs = await ctx.storage.createAccount({ name: 'theirs' });
      await ctx.storage.appendLedgerEntries(mine.id, [credit(100)]);
      const { entries } = await ctx.storage.appendLedgerEntries(theirs.id, [credit(200), fee(5)]);
      await ctx.storage.appendLedgerEntries(mine.id, [charge(10)]);

      const page = await ctx.storage.listLedgerPage(mine.id, { limit: 50 });
      expect(page?.entries.map((e) => e.amountMicros)).toEqual([-10, 100]);
      expect(page?.entries.map((e) => e.balanceAfterMicros)).toEqual([90, 100]);
      expect(await ctx.storage.listLedgerPage(mine.id, { limit: 50, after: entries[0]!.id })).toBeNull();
      expect(await ctx.storage.listLedgerPage(mine.id, { limit: 50, after: 'led_nope' })).toBeNull();
      const last = await ctx.storage.listLedgerPage(mine.id, { limit: 50, after: page!.entries[1]!.id });
      expect(last).toEqual({ entries: [], hasMore: false });
      expect(await ctx.storage.listLedgerPage('acct_nobody', { limit: 50 })).toEqual({
        entries: [],
        hasMore: false,
      });
    });
  });
}
