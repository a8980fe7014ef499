import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../storage/metering-types.js';
import type { RecordCursor, RequestRecordFilter } from '../storage/records-export.js';
import type { LedgerEntry, NewLedgerEntry } from '../storage/types.js';
import { charge, credit, fee } from './fixtures.js';
import { requestRecord } from './metering-fixtures.js';
import type { ConformanceContext } from './storage-harness.js';

const T0 = Date.UTC(2024, 4, 1, 12);

export function recordsExportCases(ctx: ConformanceContext): void {
  /** Every record of the account from `since` on, read `limit` at a time. */
  async function readAllRecords(
    accountId: string,
    since: number,
    limit: number,
    filter?: RequestRecordFilter,
  ) {
    const all: RequestRecord[] = [];
    let before: RecordCursor | undefined;
    let pages = 0;
    for (;;) {
      const page = await ctx.storage.listRequestRecordsPage(accountId, {
        since,
        limit,
        ...(before && { before }),
        ...(filter && { filter }),
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

    it('listRequestRecordsPage - filter.model matches the model that served or the one asked for, exactly', async () => {
      const account = await ctx.storage.createAccount({ name: 'models' });
      const at = (i: number, overrides: Partial<RequestRecord>) =>
        ctx.storage.insertRequestRecord(
          requestRecord(account.id, { id: `req_m${i}`, createdAt: T0 + i, ...overrides }),
        );
      await at(1, { model: 'acme/a', requestedModel: null });
      await at(2, { model: 'acme/b', requestedModel: 'acme/a' });
      await at(3, { model: 'acme/c', requestedModel: null });
      await at(4, { model: null, requestedModel: null, status: 'refused', httpStatus: 400 });
      await at(5, { model: 'acme/a-large', requestedModel: 'ACME/A' });
      const ids = async (filter: RequestRecordFilter) =>
        (await ctx.storage.listRequestRecordsPage(account.id, { since: 0, limit: 50, filter })).map(
          (r) => r.id,
        );

      expect(await ids({ model: 'acme/a' })).toEqual(['req_m2', 'req_m1']);
      expect(await ids({ model: 'acme/c' })).toEqual(['req_m3']);
      expect(await ids({ model: 'ACME/A' })).toEqual(['req_m5']);
      expect(await ids({ model: 'acme/%' })).toEqual([]);
      expect(await ids({})).toEqual(['req_m5', 'req_m4', 'req_m3', 'req_m2', 'req_m1']);
    });

    it('listRequestRecordsPage - filter.status and filter.keyId keep only the records with that value', async () => {
      const account = await ctx.storage.createAccount({ name: 'status' });
      const statuses = ['success', 'error', 'in_progress', 'success', 'client_closed'] as const;
      for (const [i, status] of statuses.entries()) {
        await ctx.storage.insertRequestRecord(
          requestRecord(account.id, {
            id: `req_s${i}`,
            createdAt: T0 + i,
            status,
            keyId: i % 2 ? 'key_odd' : 'key_even',
          }),
        );
      }
      await ctx.storage.insertRequestRecord(
        requestRecord(account.id, { id: 'req_s9', createdAt: T0 + 9, keyId: null }),
      );
      const ids = async (filter: RequestRecordFilter) =>
        (await ctx.storage.listRequestRecordsPage(account.id, { since: 0, limit: 50, filter })).map(
          (r) => r.id,
        );

      expect(await ids({ status: 'success' })).toEqual(['req_s9', 'req_s3', 'req_s0']);
      expect(await ids({ status: 'in_progress' })).toEqual(['req_s2']);
      expect(await ids({ status: 'replayed' })).toEqual([]);
      expect(await ids({ keyId: 'key_odd' })).toEqual(['req_s3', 'req_s1']);
      expect(await ids({ keyId: 'key_EVEN' })).toEqual([]);
    });

    it('listRequestRecordsPage - filter.label matches exactly that metadata pair, case-sensitively, never a part of another', async () => {
      const account = await ctx.storage.createAccount({ name: 'labels' });
      const metadatas: Record<string, string>[] = [
        { team: 'alpha', env: 'prod' }, // 0: matches team=alpha
        { env: 'dev', team: 'alpha' }, // 1: matches, in another position
        { team: 'alpha-2' }, // 2: a longer value
        { team: 'Alpha' }, // 3: another case
        { teamx: 'alpha', xteam: 'alpha' }, // 4: longer names
        { note: 'team":"alpha' }, // 5: the needle's text inside a value
        { note: '"team":"alpha"' }, // 6: the whole needle inside a value
        { team: '' }, // 7: an empty value
        { note: 'a "quoted" \\ value, ünïcødé 😀' }, // 8: escapes and non-ASCII
        {}, // 9
      ];
      for (const [i, metadata] of metadatas.entries()) {
        await ctx.storage.insertRequestRecord(
          requestRecord(account.id, { id: `req_l${i}`, createdAt: T0 + i, metadata }),
        );
      }
      const ids = async (name: string, value: string) =>
        (
          await ctx.storage.listRequestRecordsPage(account.id, {
            since: 0,
            limit: 50,
            filter: { label: { name, value } },
          })
        ).map((r) => r.id);

      expect(await ids('team', 'alpha')).toEqual(['req_l1', 'req_l0']);
      expect(await ids('team', 'Alpha')).toEqual(['req_l3']);
      expect(await ids('team', 'alph')).toEqual([]);
      expect(await ids('team', '')).toEqual(['req_l7']);
      expect(await ids('env', 'prod')).toEqual(['req_l0']);
      expect(await ids('note', 'team":"alpha')).toEqual(['req_l5']);
      expect(await ids('note', 'a "quoted" \\ value, ünïcødé 😀')).toEqual(['req_l8']);
      expect(await ids('note', 'a "quoted"')).toEqual([]);
      expect(await ids('TEAM', 'alpha')).toEqual([]);
      expect(await ids('team', '%')).toEqual([]);
    });

    it('listRequestRecordsPage - filters combine with AND, and pages of a filter lose and repeat nothing', async () => {
      const account = await ctx.storage.createAccount({ name: 'combined' });
      const other = await ctx.storage.createAccount({ name: 'other' });
      const expected: string[] = [];
      // 4 records per millisecond over 6 milliseconds: half match every filter, each of the others
      // misses exactly one of them (in turn: model, status, key, label).
      const miss = ['model', 'status', 'key', 'label'];
      for (let ms = 0; ms < 6; ms++) {
        for (const [j, suffix] of ['d', 'a', 'c', 'b'].entries()) {
          const id = `req_${ms}${suffix}`;
          const matches = (ms + j) % 2 === 0;
          const missed = matches ? null : miss[(ms * 4 + j) % 4];
          await ctx.storage.insertRequestRecord(
            requestRecord(account.id, {
              id,
              createdAt: T0 + ms,
              model: missed === 'model' ? 'acme/y' : 'acme/x',
              status: missed === 'status' ? 'success' : 'error',
              keyId: missed === 'key' ? 'key_2' : 'key_1',
              metadata: missed === 'label' ? { run: 'r2' } : { run: 'r1', other: 'x' },
            }),
          );
          if (matches) expected.push(id);
        }
        await ctx.storage.insertRequestRecord(
          requestRecord(other.id, {
            id: `req_${ms}z`,
            createdAt: T0 + ms,
            model: 'acme/x',
            status: 'error',
            metadata: { run: 'r1' },
          }),
        );
      }
      expected.sort().reverse();
      const filter: RequestRecordFilter = {
        model: 'acme/x',
        status: 'error',
        keyId: 'key_1',
        label: { name: 'run', value: 'r1' },
      };
      for (const limit of [1, 2, 5, 50]) {
        const { all } = await readAllRecords(account.id, 0, limit, filter);
        expect(all.map((r) => r.id)).toEqual(expected);
      }
      expect(expected).toHaveLength(12);
      const { all } = await readAllRecords(account.id, T0 + 3, 2, filter);
      expect(all.map((r) => r.id)).toEqual(expected.filter((id) => id >= 'req_3'));
      const oneMissed: RequestRecordFilter[] = [
        { model: 'acme/y' },
        { status: 'success' },
        { keyId: 'key_2' },
        { label: { name: 'run', value: 'r2' } },
      ];
      for (const missed of oneMissed) {
        const { all: missing } = await readAllRecords(account.id, 0, 50, { ...filter, ...missed });
        expect(missing.length).toBeGreaterThan(0);
        expect(missing.length).toBeLessThan(12);
      }
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
