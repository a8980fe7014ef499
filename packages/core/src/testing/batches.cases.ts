import { describe, expect, it } from 'vitest';
import type { Batch } from '../storage/batches.js';
import { batchFixtures, LEASE, T0 } from './batch-fixtures.js';
import { batchWorkerCases } from './batch-worker.cases.js';
import { rawCount, rawOne, toNumber } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

export function batchesCases(ctx: ConformanceContext): void {
  const { items, owner, create, claim, finish, rawItem, rawCounts } = batchFixtures(ctx);

  describe('batches', () => {
    it('createBatch - stores the batch in_progress with its items queued, metadata as JSON text (raw)', async () => {
      const o = await owner();
      const batch = await ctx.storage.createBatch({
        id: 'batch_one',
        accountId: o.account.id,
        keyId: o.key.id,
        endpoint: '/v1/embeddings',
        metadata: { project: 'q3' },
        items: items(3),
        now: T0,
      });

      const expected: Batch = {
        id: 'batch_one',
        accountId: o.account.id,
        keyId: o.key.id,
        endpoint: '/v1/embeddings',
        status: 'in_progress',
        total: 3,
        completed: 0,
        failed: 0,
        metadata: { project: 'q3' },
        createdAt: T0,
        inProgressAt: T0,
        completedAt: null,
        cancelledAt: null,
      };
      expect(batch).toEqual(expected);
      expect(await ctx.storage.getBatch(o.account.id, 'batch_one')).toEqual(expected);
      const row = await rawOne(ctx, `SELECT * FROM batches WHERE id = 'batch_one'`);
      expect([
        row.api_key_id,
        row.status,
        toNumber(row.created_at),
        JSON.parse(String(row.metadata)),
      ]).toEqual([o.key.id, 'in_progress', T0, { project: 'q3' }]);
      const itemRow = await rawOne(ctx, `SELECT * FROM batch_items WHERE batch_id = 'batch_one' AND idx = 2`);
      expect([itemRow.custom_id, itemRow.request_id, itemRow.sealed_body]).toEqual([
        'i-2',
        'req_i2',
        'v1.sealed.i.2',
      ]);
      expect(await rawItem('batch_one', 2)).toEqual({
        state: 'queued',
        owner: null,
        leaseUntil: null,
        attempts: 0,
        result: null,
        finishedAt: null,
      });
      expect((await create(o, 'batch_nometa')).metadata).toBeNull();
    });

    it("createBatch - rejects an unknown account, an unknown key or another account's key, and a taken id", async () => {
      const o = await owner();
      const other = await owner('other');
      await create(o, 'batch_taken');

      await expect(create({ account: { id: 'acct_nope' }, key: o.key }, 'batch_x')).rejects.toThrow();
      await expect(create({ account: o.account, key: { id: 'key_nope' } }, 'batch_x')).rejects.toThrow();
      await expect(create({ account: o.account, key: other.key }, 'batch_x')).rejects.toThrow();
      await expect(create(o, 'batch_taken')).rejects.toThrow();
      await expect(create(other, 'batch_taken')).rejects.toThrow();
      expect(await rawCount(ctx, 'batches')).toBe(1);
      expect(await rawCount(ctx, 'batch_items')).toBe(3);
    });

    it('createBatch - stores 10 000 items in one call', async () => {
      const o = await owner();
      const batch = await create(o, 'batch_big', 10_000);

      expect(batch.total).toBe(10_000);
      expect(await rawCount(ctx, 'batch_items', `batch_id = 'batch_big' AND state = 'queued'`)).toBe(10_000);
      expect((await claim('w', 3)).map((item) => item.index)).toEqual([0, 1, 2]);
      expect(await ctx.storage.countBatchItems()).toEqual({
        queued: 9_997,
        running: 3,
        completed: 0,
        failed: 0,
        cancelled: 0,
      });
      expect(await rawCounts()).toEqual(await ctx.storage.countBatchItems());
    });

    it("getBatch / listBatches - newest first (ties by id, descending), limit + 1, after; another account's read as absent", async () => {
      const o = await owner();
      const other = await owner('other');
      for (const [id, at] of [
        ['batch_a', T0],
        ['batch_c', T0],
        ['batch_b', T0 + 5],
        ['batch_d', T0 - 5],
      ] as const) {
        await create(o, id, 1, at);
      }
      await create(other, 'batch_theirs', 1, T0 + 10);
      const ids = async (options: { limit: number; after?: string }, account = o.account.id) =>
        (await ctx.storage.listBatches(account, options)).map((batch) => batch.id);

      expect(await ids({ limit: 10 })).toEqual(['batch_b', 'batch_c', 'batch_a', 'batch_d']);
      expect(await ids({ limit: 2 })).toEqual(['batch_b', 'batch_c', 'batch_a']);
      expect(await ids({ limit: 2, after: 'batch_c' })).toEqual(['batch_a', 'batch_d']);
      expect(await ids({ limit: 1, after: 'batch_b' })).toEqual(['batch_c', 'batch_a']);
      expect(await ids({ limit: 5, after: 'batch_d' })).toEqual([]);
      expect(await ids({ limit: 5, after: 'batch_theirs' })).toEqual([]);
      expect(await ids({ limit: 5, after: 'batch_unknown' })).toEqual([]);
      expect(await ids({ limit: 5 }, other.account.id)).toEqual(['batch_theirs']);
      expect(await ctx.storage.getBatch(other.account.id, 'batch_a')).toBeNull();
      expect(await ctx.storage.getBatch(o.account.id, 'batch_unknown')).toBeNull();
    });

    it('cancelBatch - with nothing running: queued items cancelled, the batch cancelled at once; then unchanged', async () => {
      const o = await owner();
      await create(o, 'batch_c', 3);

      const cancelled = await ctx.storage.cancelBatch(o.account.id, 'batch_c', T0 + 7);

      expect(cancelled).toMatchObject({ status: 'cancelled', cancelledAt: T0 + 7, completedAt: null });
      expect(await rawCount(ctx, 'batch_items', `state = 'cancelled' AND finished_at = ${T0 + 7}`)).toBe(3);
      expect(await claim('w', 5)).toEqual([]);
      expect(await ctx.storage.cancelBatch(o.account.id, 'batch_c', T0 + 9)).toEqual(cancelled);
      expect(await ctx.storage.getBatch(o.account.id, 'batch_c')).toEqual(cancelled);
    });

    it('cancelBatch - with an item running: cancelling until that item finishes, then cancelled', async () => {
      const o = await owner();
      await create(o, 'batch_c', 3);
      const [running] = await claim('w', 1);

      expect(await ctx.storage.cancelBatch(o.account.id, 'batch_c', T0 + 1)).toMatchObject({
        status: 'cancelling',
        cancelledAt: null,
      });
      expect(await claim('w2', 5, T0 + 2)).toEqual([]);
      expect(await ctx.storage.cancelBatch(o.account.id, 'batch_c', T0 + 3)).toMatchObject({
        status: 'cancelling',
      });
      expect(await finish(running!, 'w', 'completed', T0 + 4)).toBe(true);

      expect(await ctx.storage.getBatch(o.account.id, 'batch_c')).toMatchObject({
        status: 'cancelled',
        completed: 1,
        cancelledAt: T0 + 4,
        completedAt: null,
      });
    });

    it('cancelBatch - an expired lease of a cancelling batch is claimed with batchStatus cancelling; finishing it cancelled ends the batch', async () => {
      const o = await owner();
      await create(o, 'batch_c', 2);
      await claim('w1', 1);
      await ctx.storage.cancelBatch(o.account.id, 'batch_c', T0 + 1);

      const [again] = await claim('w2', 5, T0 + LEASE);

      expect(again).toMatchObject({ index: 0, batchStatus: 'cancelling', attempts: 2 });
      expect(await finish(again!, 'w2', 'cancelled', T0 + LEASE + 1)).toBe(true);
      expect(await ctx.storage.getBatch(o.account.id, 'batch_c')).toMatchObject({
        status: 'cancelled',
        completed: 0,
        failed: 0,
        cancelledAt: T0 + LEASE + 1,
      });
      expect(await rawItem('batch_c', 0)).toMatchObject({ state: 'cancelled', result: null });
      expect(await ctx.storage.countBatchItems()).toMatchObject({ cancelled: 2, running: 0 });
      expect(await rawCounts()).toEqual(await ctx.storage.countBatchItems());
    });

    it("cancelBatch - a completed batch is returned unchanged; another account's batch is null and untouched", async () => {
      const o = await owner();
      const other = await owner('other');
      await create(o, 'batch_done', 1);
      await finish((await claim('w', 1))[0]!, 'w', 'completed', T0 + 1);
      const done = await ctx.storage.getBatch(o.account.id, 'batch_done');
      await create(o, 'batch_live', 1);

      expect(await ctx.storage.cancelBatch(o.account.id, 'batch_done', T0 + 2)).toEqual(done);
      expect(await ctx.storage.cancelBatch(other.account.id, 'batch_live', T0 + 2)).toBeNull();
      expect(await ctx.storage.cancelBatch(o.account.id, 'batch_unknown', T0 + 2)).toBeNull();
      expect(await ctx.storage.getBatch(o.account.id, 'batch_live')).toMatchObject({ status: 'in_progress' });
      expect(await rawCount(ctx, 'batch_items', `state = 'queued'`)).toBe(1);
    });

    it('listFinishedBatchItems - pages finished items in index order; countBatchItems counts every state', async () => {
      expect(await ctx.storage.countBatchItems()).toEqual({
        queued: 0,
        running: 0,
        completed: 0,
        failed: 0,
        cancelled: 0,
      });
      const o = await owner();
      await create(o, 'batch_l', 6);
      await create(o, 'batch_q', 1, T0 + 1);
      const [i0, i1, i2] = await claim('w', 3);
      await finish(i2!, 'w', 'completed');
      await finish(i0!, 'w', 'failed');
      await ctx.storage.cancelBatch(o.account.id, 'batch_l', T0);
      const page = (afterIndex: number, limit: number) =>
        ctx.storage.listFinishedBatchItems('batch_l', { afterIndex, limit });

      expect(await page(-1, 2)).toEqual([
        {
          index: 0,
          customId: 'batch_l-0',
          requestId: 'req_batch_l0',
          state: 'failed',
          sealedResult: 'v1.result.0',
        },
        {
          index: 2,
          customId: 'batch_l-2',
          requestId: 'req_batch_l2',
          state: 'completed',
          sealedResult: 'v1.result.2',
        },
      ]);
      expect((await page(2, 2)).map((item) => [item.index, item.state, item.sealedResult])).toEqual([
        [3, 'cancelled', null],
        [4, 'cancelled', null],
      ]);
      expect((await page(4, 10)).map((item) => item.index)).toEqual([5]);
      expect(await page(5, 10)).toEqual([]);
      expect(await ctx.storage.countBatchItems()).toEqual({
        queued: 1,
        running: 1,
        completed: 1,
        failed: 1,
        cancelled: 3,
      });
      expect(await rawCounts()).toEqual(await ctx.storage.countBatchItems());
      expect(i1).toMatchObject({ index: 1 });
    });
  });
  batchWorkerCases(ctx);
}
