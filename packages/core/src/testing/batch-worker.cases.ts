import { describe, expect, it } from 'vitest';
import { batchFixtures, LEASE, T0 } from './batch-fixtures.js';
import { concurrently } from './metering-fixtures.js';
import { rawCount } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

export function batchWorkerCases(ctx: ConformanceContext): void {
  const { owner, create, claim, finish, rawItem, keys } = batchFixtures(ctx);

  describe('batch workers: claim, lease, finish', () => {
    it('claimBatchItems - oldest batch first in index order, up to limit, leased to the owner (raw)', async () => {
      const o = await owner();
      await create(o, 'batch_new', 2, T0 + 1);
      await create(o, 'batch_old', 3, T0);

      const first = await claim('w1', 4, T0 + 100);

      expect(keys(first)).toEqual(['batch_old#0', 'batch_old#1', 'batch_old#2', 'batch_new#0']);
      expect(first[3]).toEqual({
        batchId: 'batch_new',
        accountId: o.account.id,
        keyId: o.key.id,
        endpoint: '/v1/chat/completions',
        batchStatus: 'in_progress',
        index: 0,
        customId: 'batch_new-0',
        requestId: 'req_batch_new0',
        sealedBody: 'v1.sealed.batch_new.0',
        attempts: 1,
        leaseUntil: T0 + 100 + LEASE,
      });
      expect(await rawItem('batch_old', 1)).toMatchObject({
        state: 'running',
        owner: 'w1',
        leaseUntil: T0 + 100 + LEASE,
        attempts: 1,
      });
      expect(keys(await claim('w2', 4, T0 + 100))).toEqual(['batch_new#1']);
      expect(await claim('w2', 4, T0 + 100)).toEqual([]);
    });

    it('claimBatchItems - claims no queued item of a batch that is not in_progress', async () => {
      const o = await owner();
      await create(o, 'batch_paused', 2);
      await ctx.raw(`UPDATE batches SET status = 'cancelling' WHERE id = 'batch_paused'`);

      expect(await claim('w', 5)).toEqual([]);
      expect(await rawCount(ctx, 'batch_items', `state = 'queued'`)).toBe(2);
    });

    it('claimBatchItems - concurrent claimers never get the same item, and between them claim every item once', async () => {
      const o = await owner();
      await create(o, 'batch_race', 30);

      const claims = await concurrently(ctx, 8, (storage, i) =>
        storage.claimBatchItems({ owner: `w${i}`, now: T0, leaseMs: LEASE, limit: 5 }),
      );

      const all = claims.flatMap((claimed) => keys(claimed));
      expect(all).toHaveLength(30);
      expect(new Set(all).size).toBe(30);
      for (const claimed of claims) expect(claimed.length).toBeLessThanOrEqual(5);
      expect(await rawCount(ctx, 'batch_items', `state = 'running' AND attempts = 1`)).toBe(30);
      for (const [i, claimed] of claims.entries()) {
        for (const item of claimed) expect((await rawItem(item.batchId, item.index)).owner).toBe(`w${i}`);
      }
    });

    it("renewBatchLeases - extends only the owner's running items", async () => {
      const o = await owner();
      await create(o, 'batch_r', 4);
      const mine = await claim('w1', 2);
      await claim('w2', 1);
      await finish(mine[1]!, 'w1', 'completed');

      expect(await ctx.storage.renewBatchLeases({ owner: 'w1', now: T0 + 500, leaseMs: LEASE })).toBe(1);
      expect(await rawItem('batch_r', 0)).toMatchObject({ owner: 'w1', leaseUntil: T0 + 500 + LEASE });
      expect((await rawItem('batch_r', 1)).leaseUntil).not.toBe(T0 + 500 + LEASE);
      expect(await rawItem('batch_r', 2)).toMatchObject({ owner: 'w2', leaseUntil: T0 + LEASE });
      expect(await ctx.storage.renewBatchLeases({ owner: 'w9', now: T0, leaseMs: LEASE })).toBe(0);
    });

    it('claimBatchItems - an expired lease makes the item claimable by another owner, before queued items; the old owner can no longer finish it', async () => {
      const o = await owner();
      await create(o, 'batch_x', 3);
      const [lost] = await claim('w1', 1);

      expect(keys(await claim('w2', 1, T0 + LEASE - 1))).toEqual(['batch_x#1']);
      const [taken, queued] = await claim('w3', 2, T0 + LEASE);

      expect(taken).toMatchObject({ index: 0, attempts: 2, leaseUntil: T0 + 2 * LEASE });
      expect(queued).toMatchObject({ index: 2, attempts: 1 });
      expect(await finish(lost!, 'w1', 'completed')).toBe(false);
      expect(await ctx.storage.renewBatchLeases({ owner: 'w1', now: T0, leaseMs: LEASE })).toBe(0);
      expect(await rawItem('batch_x', 0)).toMatchObject({
        state: 'running',
        owner: 'w3',
        attempts: 2,
        result: null,
      });
      expect(await finish(taken!, 'w3', 'completed')).toBe(true);
      expect(await ctx.storage.getBatch(o.account.id, 'batch_x')).toMatchObject({ completed: 1 });
    });

    it('finishBatchItem - counts each outcome; the batch completes when its last item finishes, not before', async () => {
      const o = await owner();
      await create(o, 'batch_f', 3);
      const [a, b, c] = await claim('w', 3);

      expect(await finish(a!, 'w', 'completed', T0 + 1)).toBe(true);
      expect(await finish(b!, 'w', 'failed', T0 + 2)).toBe(true);
      expect(await finish(b!, 'w', 'completed', T0 + 2)).toBe(false);
      expect(await ctx.storage.getBatch(o.account.id, 'batch_f')).toMatchObject({
        status: 'in_progress',
        completed: 1,
        failed: 1,
        completedAt: null,
      });
      expect(await finish(c!, 'w', 'completed', T0 + 3)).toBe(true);

      expect(await ctx.storage.getBatch(o.account.id, 'batch_f')).toMatchObject({
        status: 'completed',
        completed: 2,
        failed: 1,
        completedAt: T0 + 3,
        cancelledAt: null,
      });
      expect(await rawItem('batch_f', 1)).toMatchObject({
        state: 'failed',
        result: 'v1.result.1',
        finishedAt: T0 + 2,
      });
    });
    it('finishBatchItem - concurrent finishes of every item count each once and end the batch', async () => {
      const o = await owner();
      await create(o, 'batch_race', 12);
      const claimed = await claim('w', 12);

      const results = await concurrently(ctx, claimed.length, (storage, i) =>
        storage.finishBatchItem({
          batchId: 'batch_race',
          index: claimed[i]!.index,
          owner: 'w',
          state: i % 3 === 0 ? 'failed' : 'completed',
          sealedResult: 'v1.result',
          now: T0 + 1,
        }),
      );

      expect(results.every((finished) => finished)).toBe(true);
      expect(await ctx.storage.getBatch(o.account.id, 'batch_race')).toMatchObject({
        status: 'completed',
        completed: 8,
        failed: 4,
        completedAt: T0 + 1,
      });
    });

    it('cancelBatch - racing the finishes of the running items, the batch ends cancelled', async () => {
      const o = await owner();
      await create(o, 'batch_race', 10);
      const claimed = await claim('w', 5);

      await concurrently(
        ctx,
        claimed.length + 1,
        async (storage, i): Promise<unknown> =>
          i === claimed.length
            ? storage.cancelBatch(o.account.id, 'batch_race', T0 + 1)
            : storage.finishBatchItem({
                batchId: 'batch_race',
                index: claimed[i]!.index,
                owner: 'w',
                state: 'completed',
                sealedResult: 'v1.result',
                now: T0 + 1,
              }),
      );

      expect(await ctx.storage.getBatch(o.account.id, 'batch_race')).toMatchObject({
        status: 'cancelled',
        completed: 5,
        cancelledAt: T0 + 1,
      });
      expect(await rawCount(ctx, 'batch_items', `state = 'cancelled'`)).toBe(5);
    });
  });
}
