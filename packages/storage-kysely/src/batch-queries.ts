import type {
  Batch,
  BatchEndpoint,
  BatchItemCounts,
  BatchItemState,
  EpochMs,
  FinishedBatchItem,
  NewBatchItem,
} from '@tollgate/core';
import { type Kysely, type Selectable, sql } from 'kysely';
import { requireAccount } from './account-queries.js';
import type { BatchesTable, Database } from './database.js';
import { assertInteger, type QueryContext, write } from './query-context.js';
import { toInteger, toNullableInteger } from './row-mappers.js';

/**
 * Items per INSERT of `createBatch`: 11 parameters a row, so 5 500 a statement, far below SQLite's
 * 32 766 and Postgres' 65 535 bound parameters.
 */
const ITEM_PAGE = 500;

/**
 * `column = 'state'` with the state as a literal, not a bound parameter: only then can either
 * database match the partial indexes of `batch_items` (the baselines') to the query.
 */
export function stateIs(column: string, state: BatchItemState | Batch['status']) {
  return sql<boolean>`${sql.ref(column)} = ${sql.lit(state)}`;
}

/** A `batches` row as a {@link Batch}: the one place its JSON `metadata` is read. */
export function mapBatch(row: Selectable<BatchesTable>): Batch {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.api_key_id,
    endpoint: row.endpoint,
    status: row.status,
    total: toInteger(row.total),
    completed: toInteger(row.completed),
    failed: toInteger(row.failed),
    metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, string>),
    createdAt: toInteger(row.created_at),
    inProgressAt: toNullableInteger(row.in_progress_at),
    completedAt: toNullableInteger(row.completed_at),
    cancelledAt: toNullableInteger(row.cancelled_at),
  };
}

/**
 * `Storage.createBatch`: one write transaction that checks the account and that the key is one of
 * its keys (for a clear error; the foreign keys enforce existence too), inserts the batch and then
 * its items, {@link ITEM_PAGE} to a statement. The primary key refuses a taken id.
 */
export async function createBatch(
  ctx: QueryContext,
  input: {
    id: string;
    accountId: string;
    keyId: string;
    endpoint: BatchEndpoint;
    metadata: Record<string, string> | null;
    items: readonly NewBatchItem[];
    now: EpochMs;
  },
): Promise<Batch> {
  assertInteger('now', input.now);
  // A batch without items would never end: no item is ever finished to end it.
  if (input.items.length === 0) throw new RangeError('a batch needs at least one item');
  for (const item of input.items) assertInteger('index', item.index);
  const row = await write(ctx, async (trx) => {
    await requireAccount(trx, input.accountId);
    const key = await trx
      .selectFrom('api_keys')
      .select('account_id')
      .where('id', '=', input.keyId)
      .executeTakeFirst();
    if (key?.account_id !== input.accountId) {
      throw new Error(`key ${input.keyId} is not a key of account ${input.accountId}`);
    }
    const batch = await trx
      .insertInto('batches')
      .values({
        id: input.id,
        account_id: input.accountId,
        api_key_id: input.keyId,
        endpoint: input.endpoint,
        status: 'in_progress',
        total: input.items.length,
        completed: 0,
        failed: 0,
        metadata: input.metadata === null ? null : JSON.stringify(input.metadata),
        created_at: input.now,
        in_progress_at: input.now,
        completed_at: null,
        cancelled_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    for (let start = 0; start < input.items.length; start += ITEM_PAGE) {
      await trx
        .insertInto('batch_items')
        .values(
          input.items.slice(start, start + ITEM_PAGE).map((item) => ({
            batch_id: input.id,
            idx: item.index,
            custom_id: item.customId,
            request_id: item.requestId,
            sealed_body: item.sealedBody,
            state: 'queued' as const,
            lease_owner: null,
            lease_until: null,
            attempts: 0,
            sealed_result: null,
            finished_at: null,
          })),
        )
        .execute();
    }
    return batch;
  });
  return mapBatch(row);
}

/** `Storage.getBatch`: scoped to the account. */
export async function getBatch(ctx: QueryContext, accountId: string, batchId: string): Promise<Batch | null> {
  const row = await ctx.db
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', batchId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? mapBatch(row) : null;
}

/**
 * `Storage.listBatches`: newest first by (`created_at`, `id`), up to `limit` + 1 rows, in one
 * statement. `after` is resolved in a subquery scoped to the account; a cursor the account does
 * not have yields no row there, the row comparison is NULL, and the list is empty.
 */
export async function listBatches(
  ctx: QueryContext,
  accountId: string,
  options: { limit: number; after?: string },
): Promise<Batch[]> {
  assertInteger('limit', options.limit);
  if (options.limit < 0) throw new RangeError('a batch list limit cannot be negative');
  const { after } = options;
  const rows = await ctx.db
    .selectFrom('batches')
    .selectAll()
    .where('account_id', '=', accountId)
    .$if(after !== undefined, (qb) =>
      qb.where(
        sql<boolean>`(batches.created_at, batches.id) < (select c.created_at, c.id from batches c where c.id = ${after} and c.account_id = ${accountId})`,
      ),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .execute();
  return rows.map(mapBatch);
}

/**
 * Locks the batch row until the transaction ends (Postgres: `SELECT … FOR UPDATE`; SQLite: the
 * write transaction already holds the database) and reads it. `finishBatchItem` and `cancelBatch`
 * take it first, so the one that ends a batch sees every item change the other made.
 */
export function lockedBatch(trx: Kysely<Database>, ctx: QueryContext, batchId: string) {
  return trx
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', batchId)
    .$if(ctx.dialect.selectForUpdate, (qb) => qb.forUpdate());
}

/**
 * `Storage.cancelBatch`, in one write transaction: locks the account's batch row; an `in_progress`
 * or `validating` batch has its queued items cancelled and becomes `cancelling`, or `cancelled` at
 * once when none of its items is running (read after the items were cancelled: on Postgres, an
 * item a concurrent claim took is `running` by then, since the cancel waited for its row lock).
 */
export async function cancelBatch(
  ctx: QueryContext,
  accountId: string,
  batchId: string,
  now: EpochMs,
): Promise<Batch | null> {
  assertInteger('now', now);
  const row = await write(ctx, async (trx) => {
    const batch = await lockedBatch(trx, ctx, batchId).where('account_id', '=', accountId).executeTakeFirst();
    if (!batch) return null;
    if (batch.status !== 'in_progress' && batch.status !== 'validating') return batch;
    await trx
      .updateTable('batch_items')
      .set({ state: 'cancelled', finished_at: now })
      .where('batch_id', '=', batchId)
      .where(stateIs('state', 'queued'))
      .execute();
    const running = await trx
      .selectFrom('batch_items')
      .select('idx')
      .where('batch_id', '=', batchId)
      .where(stateIs('state', 'running'))
      .limit(1)
      .executeTakeFirst();
    return trx
      .updateTable('batches')
      .set(running ? { status: 'cancelling' } : { status: 'cancelled', cancelled_at: now })
      .where('id', '=', batchId)
      .returningAll()
      .executeTakeFirstOrThrow();
  });
  return row ? mapBatch(row) : null;
}

/**
 * `Storage.listFinishedBatchItems`: a range of the primary key (batch, index) after `afterIndex`,
 * skipping items not finished yet.
 */
export async function listFinishedBatchItems(
  ctx: QueryContext,
  batchId: string,
  options: { afterIndex: number; limit: number },
): Promise<FinishedBatchItem[]> {
  assertInteger('afterIndex', options.afterIndex);
  assertInteger('limit', options.limit);
  const rows = await ctx.db
    .selectFrom('batch_items')
    .select(['idx', 'custom_id', 'request_id', 'state', 'sealed_result'])
    .where('batch_id', '=', batchId)
    .where('idx', '>', options.afterIndex)
    .where(sql<boolean>`state in ('completed', 'failed', 'cancelled')`)
    .orderBy('idx')
    .limit(options.limit)
    .execute();
  return rows.map((row) => ({
    index: toInteger(row.idx),
    customId: row.custom_id,
    requestId: row.request_id,
    state: row.state as FinishedBatchItem['state'],
    sealedResult: row.sealed_result,
  }));
}

/**
 * `Storage.countBatchItems`, in one statement (one snapshot) that never reads finished items:
 * `queued` and `running` are counted from their partial indexes, `completed` and `failed` are the
 * sums of the batches' counts, and `cancelled` is what is left of the batches' totals. Exact,
 * because every change of an item's state counts it on its batch in the same transaction (a
 * cancelled item is the one outcome counted in neither), and cheap enough for every `/metrics`
 * scrape however many finished items storage keeps.
 */
export async function countBatchItems(ctx: QueryContext): Promise<BatchItemCounts> {
  const row = await ctx.db
    .selectNoFrom((eb) => {
      const items = (state: BatchItemState) =>
        eb
          .selectFrom('batch_items')
          .select((inner) => inner.fn.countAll().as('n'))
          .where(stateIs('state', state));
      const sum = (column: 'total' | 'completed' | 'failed') =>
        eb
          .selectFrom('batches')
          .select((inner) => inner.fn.coalesce(inner.fn.sum(column), sql.lit(0)).as('n'));
      return [
        items('queued').as('queued'),
        items('running').as('running'),
        sum('total').as('total'),
        sum('completed').as('completed'),
        sum('failed').as('failed'),
      ];
    })
    .executeTakeFirstOrThrow();
  const [queued, running, total, completed, failed] = [
    row.queued,
    row.running,
    row.total,
    row.completed,
    row.failed,
  ].map(toInteger) as [number, number, number, number, number];
  return { queued, running, completed, failed, cancelled: total - completed - failed - queued - running };
}
