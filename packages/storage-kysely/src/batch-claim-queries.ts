import type { Batch, BatchItemState, ClaimedBatchItem, EpochMs } from '@tollgate/core';
import { type QueryCreator, sql, type Transaction } from 'kysely';
import { lockedBatch, stateIs } from './batch-queries.js';
import type { Database } from './database.js';
import type { DialectCapabilities } from './dialect-capabilities.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { toBoolean, toInteger } from './row-mappers.js';

// The worker's side of batches: claiming items, renewing their leases, finishing them.

/**
 * `Storage.claimBatchItems`, in one write transaction of two statements:
 *
 * 1. one UPDATE … FROM a materialized CTE `picked` ({@link claimable}: the keys of up to `limit`
 *    claimable items, locked on Postgres) makes the picked items `running` under `owner` and
 *    returns them;
 * 2. one SELECT reads the few batches they belong to (account, key, endpoint, status).
 *
 * On SQLite the write transaction (`BEGIN IMMEDIATE`) already serialises claimers. The items are
 * returned oldest batch first, in index order.
 */
export async function claimBatchItems(
  ctx: QueryContext,
  input: { owner: string; now: EpochMs; leaseMs: number; limit: number },
): Promise<ClaimedBatchItem[]> {
  const { owner, now, leaseMs, limit } = input;
  assertInteger('now', now);
  assertInteger('leaseMs', leaseMs);
  assertInteger('limit', limit);
  if (leaseMs <= 0) throw new RangeError('a batch item lease must be positive');
  if (limit <= 0) return [];
  const leaseUntil = now + leaseMs;

  const { items, batches } = await write(ctx, async (trx) => {
    const items = await trx
      .with(
        (cte) => cte('picked').materialized(),
        (db) => claimable(db, ctx.dialect, now, limit),
      )
      .updateTable('batch_items')
      .from('picked')
      .set((eb) => ({
        state: 'running',
        lease_owner: owner,
        lease_until: leaseUntil,
        attempts: eb('batch_items.attempts', '+', 1),
      }))
      .whereRef('batch_items.batch_id', '=', 'picked.batch_id')
      .whereRef('batch_items.idx', '=', 'picked.idx')
      .returning([
        'batch_items.batch_id',
        'batch_items.idx',
        'batch_items.custom_id',
        'batch_items.request_id',
        'batch_items.sealed_body',
        'batch_items.attempts',
        'batch_items.lease_until',
      ])
      .execute();
    if (items.length === 0) return { items, batches: [] };
    const batches = await trx
      .selectFrom('batches')
      .select(['id', 'account_id', 'api_key_id', 'endpoint', 'status', 'created_at'])
      .where('id', 'in', [...new Set(items.map((item) => item.batch_id))])
      .execute();
    return { items, batches };
  });

  const batchById = new Map(batches.map((batch) => [batch.id, batch]));
  const claimed = items.map((item) => {
    const batch = batchById.get(item.batch_id);
    if (!batch) throw new Error(`claimed an item of batch ${item.batch_id}, which is gone`);
    return {
      order: [toInteger(batch.created_at), batch.id] as const,
      item: {
        batchId: item.batch_id,
        accountId: batch.account_id,
        keyId: batch.api_key_id,
        endpoint: batch.endpoint,
        batchStatus: batch.status,
        index: toInteger(item.idx),
        customId: item.custom_id,
        requestId: item.request_id,
        sealedBody: item.sealed_body,
        attempts: toInteger(item.attempts),
        leaseUntil: toInteger(item.lease_until),
      } satisfies ClaimedBatchItem,
    };
  });
  // RETURNING has no order: oldest batch first, in index order (an expired lease among the rest).
  claimed.sort(
    (a, b) =>
      a.order[0] - b.order[0] ||
      (a.order[1] < b.order[1] ? -1 : a.order[1] > b.order[1] ? 1 : 0) ||
      a.item.index - b.item.index,
  );
  return claimed.map(({ item }) => item);
}

/**
 * The keys of up to `limit` claimable items: first `running` items of unfinished batches whose
 * lease expired (`lease_until <= now`, oldest expiry first), then `queued` items of `in_progress`
 * batches (oldest batch first, in index order). Two branches of a UNION ALL under one LIMIT, each
 * with the state as a plain literal term so that it reads its own partial index (running items by
 * lease; queued items by batch and index, walking the `in_progress` batches oldest first) and never
 * the finished items, however many there are; the queued branch is only read for what the expired
 * one leaves of `limit`. Neither database carries the items' index order through the join, so the
 * queued branch sorts the queued items of the oldest batch that has any (about 2 ms for 20 000),
 * not more.
 *
 * On Postgres each branch locks the rows it yields with `FOR UPDATE OF i SKIP LOCKED` (where `FOR
 * UPDATE` exists so does `SKIP LOCKED`, so the dialect's `selectForUpdate` decides both): concurrent
 * claimers lock disjoint rows instead of waiting for each other, and a row that another claimer, a
 * cancel or a finish changed since the statement began is re-checked when it is locked and skipped
 * once it is no longer claimable. Locking stops when the LIMIT is met.
 */
function claimable(db: QueryCreator<Database>, dialect: DialectCapabilities, now: EpochMs, limit: number) {
  const locking = dialect.selectForUpdate;
  const items = db
    .selectFrom('batch_items as i')
    .innerJoin('batches as b', 'b.id', 'i.batch_id')
    .select(['i.batch_id', 'i.idx']);
  const expired = items
    .where(stateIs('i.state', 'running'))
    .where('i.lease_until', '<=', now)
    .where(sql<boolean>`b.status in ('validating', 'in_progress', 'cancelling')`)
    .orderBy('i.lease_until')
    .limit(limit)
    .$if(locking, (qb) => qb.forUpdate(['i']).skipLocked());
  const queued = items
    .where(stateIs('i.state', 'queued'))
    .where(stateIs('b.status', 'in_progress'))
    .orderBy('b.created_at')
    .orderBy('b.id')
    .orderBy('i.idx')
    .limit(limit)
    .$if(locking, (qb) => qb.forUpdate(['i']).skipLocked());
  return db
    .selectFrom(expired.as('e'))
    .select(['e.batch_id', 'e.idx'])
    .unionAll(db.selectFrom(queued.as('q')).select(['q.batch_id', 'q.idx']))
    .limit(limit);
}

/**
 * `Storage.renewBatchLeases`: one UPDATE of the `running` items `owner` holds. An item whose lease
 * expired but that no other worker claimed yet is still the owner's, and is renewed too.
 */
export async function renewBatchLeases(
  ctx: QueryContext,
  input: { owner: string; now: EpochMs; leaseMs: number },
): Promise<number> {
  assertInteger('now', input.now);
  assertInteger('leaseMs', input.leaseMs);
  if (input.leaseMs <= 0) throw new RangeError('a batch item lease must be positive');
  const result = await write(ctx, (trx) =>
    trx
      .updateTable('batch_items')
      .set({ lease_until: input.now + input.leaseMs })
      .where(stateIs('state', 'running'))
      .where('lease_owner', '=', input.owner)
      .executeTakeFirst(),
  );
  return Number(result.numUpdatedRows);
}

/** Whether any item of the batch is `queued` or `running`; each read from its partial index. */
async function hasUnfinishedItems(trx: Transaction<Database>, batchId: string): Promise<boolean> {
  const itemIn = (state: BatchItemState) =>
    trx
      .selectFrom('batch_items')
      .select('idx')
      .where('batch_id', '=', batchId)
      .where(stateIs('state', state));
  const row = await trx
    .selectNoFrom((eb) => [
      eb.exists(itemIn('queued')).as('queued'),
      eb.exists(itemIn('running')).as('running'),
    ])
    .executeTakeFirstOrThrow();
  return toBoolean(row.queued) || toBoolean(row.running);
}

/**
 * `Storage.finishBatchItem`, in one write transaction: the batch row is locked first; the item is
 * finished only while it is `running` under `owner` (else false, nothing written); its outcome is
 * counted on the batch and, when that was the batch's last queued or running item, the batch ends
 * in the same UPDATE (`in_progress` → `completed`, `cancelling` → `cancelled`).
 */
export async function finishBatchItem(
  ctx: QueryContext,
  input: {
    batchId: string;
    index: number;
    owner: string;
    state: 'completed' | 'failed' | 'cancelled';
    sealedResult: string | null;
    now: EpochMs;
  },
): Promise<boolean> {
  assertInteger('index', input.index);
  assertInteger('now', input.now);
  const { batchId, now, state } = input;
  return write(ctx, async (trx) => {
    const batch = await lockedBatch(trx, ctx, batchId).executeTakeFirst();
    if (!batch) return false;
    const finished = await trx
      .updateTable('batch_items')
      .set({ state, sealed_result: state === 'cancelled' ? null : input.sealedResult, finished_at: now })
      .where('batch_id', '=', batchId)
      .where('idx', '=', input.index)
      .where(stateIs('state', 'running'))
      .where('lease_owner', '=', input.owner)
      .executeTakeFirst();
    if (Number(finished.numUpdatedRows) === 0) return false;

    const end = (await hasUnfinishedItems(trx, batchId)) ? null : batchEnd(batch.status, now);
    // A cancelled item counts in neither count: unless it ends the batch, there is nothing to write.
    if (state === 'cancelled' && end === null) return true;
    await trx
      .updateTable('batches')
      .set((eb) => ({
        ...(state === 'completed' ? { completed: eb('completed', '+', 1) } : {}),
        ...(state === 'failed' ? { failed: eb('failed', '+', 1) } : {}),
        ...end,
      }))
      .where('id', '=', batchId)
      .execute();
    return true;
  });
}

/** What a batch whose last item finished becomes: `in_progress` ends `completed`, `cancelling` `cancelled`. */
function batchEnd(status: Batch['status'], now: EpochMs) {
  if (status === 'in_progress') return { status: 'completed' as const, completed_at: now };
  if (status === 'cancelling') return { status: 'cancelled' as const, cancelled_at: now };
  return null;
}
