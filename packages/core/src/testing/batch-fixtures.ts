import type { BatchItemCounts, ClaimedBatchItem, NewBatchItem } from '../storage/batches.js';
import { newKeyInput } from './fixtures.js';
import { rawOne, sqlText, toNumber, toNumberOrNull } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** The clock of the batch cases: every `now` is passed explicitly, from here. */
export const T0 = 1_700_000_000_000;
export const LEASE = 60_000;

/** Helpers of the batch cases, bound to the running test's storage. */
export function batchFixtures(ctx: ConformanceContext) {
  const items = (count: number, tag = 'i'): NewBatchItem[] =>
    Array.from({ length: count }, (_, index) => ({
      index,
      customId: `${tag}-${index}`,
      requestId: `req_${tag}${index}`,
      sealedBody: `v1.sealed.${tag}.${index}`,
    }));
  const owner = async (name = 'batches') => {
    const account = await ctx.storage.createAccount({ name });
    const key = await ctx.storage.createApiKey((await newKeyInput(account.id)).input);
    return { account, key };
  };
  const create = (o: { account: { id: string }; key: { id: string } }, id: string, count = 3, now = T0) =>
    ctx.storage.createBatch({
      id,
      accountId: o.account.id,
      keyId: o.key.id,
      endpoint: '/v1/chat/completions',
      metadata: null,
      items: items(count, id),
      now,
    });
  const claim = (who: string, limit: number, now = T0) =>
    ctx.storage.claimBatchItems({ owner: who, now, leaseMs: LEASE, limit });
  const finish = (
    item: ClaimedBatchItem,
    who: string,
    state: 'completed' | 'failed' | 'cancelled',
    now = T0,
  ) =>
    ctx.storage.finishBatchItem({
      batchId: item.batchId,
      index: item.index,
      owner: who,
      state,
      sealedResult: state === 'cancelled' ? null : `v1.result.${item.index}`,
      now,
    });
  const rawItem = async (batchId: string, index: number) => {
    const row = await rawOne(
      ctx,
      `SELECT * FROM batch_items WHERE batch_id = ${sqlText(batchId)} AND idx = ${index}`,
    );
    return {
      state: row.state,
      owner: row.lease_owner,
      leaseUntil: toNumberOrNull(row.lease_until),
      attempts: toNumber(row.attempts),
      result: row.sealed_result,
      finishedAt: toNumberOrNull(row.finished_at),
    };
  };
  const keys = (claimed: ClaimedBatchItem[]) => claimed.map((item) => `${item.batchId}#${item.index}`);

  /** Items by state, counted straight from the table. */
  const rawCounts = async (): Promise<BatchItemCounts> => {
    const counts: BatchItemCounts = { queued: 0, running: 0, completed: 0, failed: 0, cancelled: 0 };
    const rows = await ctx.raw('SELECT state, count(*) AS n FROM batch_items GROUP BY state');
    for (const row of rows) counts[row.state as keyof BatchItemCounts] = toNumber(row.n);
    return counts;
  };
  return { items, owner, create, claim, finish, rawItem, keys, rawCounts };
}
