import { describe, expect, it } from 'vitest';
import { createBodySealer } from '../../protections/sealed-body.js';
import type { ClaimedBatchItem } from '../../storage/batches.js';
import type { Storage } from '../../storage/types.js';
import { createBatchWorker } from './batch-worker.js';
import { itemSealing } from './item-sealing.js';
import type { ServeBatchItem } from './run-batch-item.js';

const ACCOUNT = 'acct_1';
const sealer = createBodySealer(new Uint8Array(32).fill(7), 'batch');
const silent = { info() {}, warn() {}, error() {}, debug() {} };

/** Just enough of storage for the worker: one batch of `count` items, claimed and finished in memory. */
async function fakeStorage(count: number, failFinishOnce: number[] = []) {
  const items = await Promise.all(
    Array.from({ length: count }, async (_, index) => ({
      index,
      requestId: `req_${index}`,
      sealedBody: await itemSealing.sealBody(sealer, ACCOUNT, `req_${index}`, { n: index }),
      state: 'queued' as 'queued' | 'running' | 'completed' | 'failed',
      attempts: 0,
      finishes: 0,
    })),
  );
  const failing = new Set(failFinishOnce);
  const storage = {
    claims: 0,
    async claimBatchItems({ limit, now, leaseMs }: { limit: number; now: number; leaseMs: number }) {
      storage.claims += 1;
      const claimed: ClaimedBatchItem[] = [];
      for (const item of items) {
        if (claimed.length === limit) break;
        if (item.state !== 'queued') continue;
        item.state = 'running';
        item.attempts += 1;
        claimed.push({
          batchId: 'batch_1',
          accountId: ACCOUNT,
          keyId: 'key_1',
          endpoint: '/v1/chat/completions',
          batchStatus: 'in_progress',
          index: item.index,
          customId: `c${item.index}`,
          requestId: item.requestId,
          sealedBody: item.sealedBody,
          attempts: item.attempts,
          leaseUntil: now + leaseMs,
        });
      }
      return claimed;
    },
    async renewBatchLeases() {
      return 0;
    },
    async finishBatchItem({ index, state }: { index: number; state: 'completed' | 'failed' }) {
      if (failing.delete(index)) throw new Error('storage unavailable');
      const item = items[index]!;
      item.state = state;
      item.finishes += 1;
      return true;
    },
    async getRequestRecord() {
      return null;
    },
    async getBatch() {
      return null;
    },
    async findApiKeyById() {
      return {
        key: { id: 'key_1', disabled: false },
        account: { id: ACCOUNT, suspended: false },
        byokKeys: 0,
        guardrails: 0,
      };
    },
  };
  return { storage, items };
}

async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(done()).toBe(true);
}

describe('createBatchWorker', () => {
  it('runs every item once, never more than `concurrency` at a time, claiming in pages', async () => {
    const { storage, items } = await fakeStorage(40);
    let active = 0;
    let peak = 0;
    const bodies: string[] = [];
    const serve: ServeBatchItem = async (_endpoint, body) => {
      active += 1;
      peak = Math.max(peak, active);
      bodies.push(body);
      await new Promise((resolve) => setTimeout(resolve, 2));
      active -= 1;
      return new Response('{"ok":true}', { status: 200 });
    };
    const worker = createBatchWorker(
      { storage: storage as unknown as Storage, batchSealer: sealer, now: () => 1, logger: silent },
      serve,
      // No polling: the refills alone must drive the batch (a poll would add claims under load).
      { concurrency: 4, leaseMs: 30_000, pollMs: 60_000 },
    );
    worker.wake();
    await until(() => items.every((item) => item.state === 'completed'));
    await worker.close();
    expect(peak).toBeLessThanOrEqual(4);
    expect(items.map((item) => item.finishes)).toEqual(items.map(() => 1));
    expect(new Set(bodies).size).toBe(40);
    // Refilled when half the slots are free: far fewer claims than items.
    expect(storage.claims).toBeLessThan(40);
  });

  it('tries a failed finish again with the same outcome, and never runs the item twice', async () => {
    const { storage, items } = await fakeStorage(3, [1]);
    let calls = 0;
    const serve: ServeBatchItem = async () => {
      calls += 1;
      return new Response('{"error":{"code":"not_found"}}', { status: 404 });
    };
    const worker = createBatchWorker(
      { storage: storage as unknown as Storage, batchSealer: sealer, now: () => 1, logger: silent },
      serve,
      { concurrency: 2, leaseMs: 30_000, pollMs: 10 },
    );
    worker.wake();
    await until(() => items.every((item) => item.state === 'failed'));
    await worker.close();
    expect(calls).toBe(3);
    expect(items.map((item) => item.finishes)).toEqual([1, 1, 1]);
  });

  it('close() waits for the items in flight and claims nothing after', async () => {
    const { storage, items } = await fakeStorage(10);
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const serve: ServeBatchItem = async () => {
      await held;
      return new Response('{}', { status: 200 });
    };
    const worker = createBatchWorker(
      { storage: storage as unknown as Storage, batchSealer: sealer, now: () => 1, logger: silent },
      serve,
      { concurrency: 2, leaseMs: 30_000, pollMs: 10 },
    );
    worker.wake();
    await until(() => items.filter((item) => item.state === 'running').length === 2);
    const closed = worker.close();
    release();
    await closed;
    const claimsAtClose = storage.claims;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(storage.claims).toBe(claimsAtClose);
    expect(items.filter((item) => item.state === 'completed')).toHaveLength(2);
    expect(items.filter((item) => item.state === 'queued')).toHaveLength(8);
  });
});
