import type { EpochMs } from './scalars.js';

/**
 * The storage of batches: a batch and its items, run in the background by workers in every server
 * process that share the database. Same conventions as `Storage` (see types.ts): every lookup that
 * takes an account id reads another account's batch as absent.
 *
 * An item's life: `queued` → `running` (claimed with a lease by one worker; an expired lease makes
 * it claimable again) → `completed` | `failed` (finished by the worker holding the lease), or
 * `queued` → `cancelled` (its batch was cancelled before any worker claimed it).
 */

/** OpenAI's batch states. */
export type BatchStatus = 'validating' | 'in_progress' | 'completed' | 'cancelling' | 'cancelled';

export type BatchEndpoint = '/v1/chat/completions' | '/v1/embeddings';

export type BatchItemState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface Batch {
  /** `batch_…`, chosen by the caller. */
  id: string;
  accountId: string;
  /** The key that created the batch; its items run as that key (its caps and its scope). */
  keyId: string;
  endpoint: BatchEndpoint;
  status: BatchStatus;
  /** Items in the batch. */
  total: number;
  /** Items answered 2xx. */
  completed: number;
  /** Items answered with an error (refused or failed upstream). */
  failed: number;
  /** The caller's metadata (string values), or `null`. */
  metadata: Record<string, string> | null;
  createdAt: EpochMs;
  inProgressAt: EpochMs | null;
  completedAt: EpochMs | null;
  cancelledAt: EpochMs | null;
}

export interface NewBatchItem {
  /** The item's place in the batch, from 0. */
  index: number;
  /** The caller's id for the item; unique in the batch. */
  customId: string;
  /** `req_…`: the request id the item runs under (its record, its charge, its result line). */
  requestId: string;
  /** The item's request body (a JSON object), sealed; opaque to storage. */
  sealedBody: string;
}

/** An item a worker has claimed: everything it needs to run it. */
export interface ClaimedBatchItem {
  batchId: string;
  accountId: string;
  keyId: string;
  endpoint: BatchEndpoint;
  /** The batch's status at the claim (`cancelling`: the item must not start; see `claimBatchItems`). */
  batchStatus: BatchStatus;
  index: number;
  customId: string;
  requestId: string;
  sealedBody: string;
  /** How many times the item has been claimed, this claim included (2 or more: a lease expired). */
  attempts: number;
  leaseUntil: EpochMs;
}

/** One finished item, as the results read it. */
export interface FinishedBatchItem {
  index: number;
  customId: string;
  requestId: string;
  state: 'completed' | 'failed' | 'cancelled';
  /** The item's answer (status and body), sealed; `null` for a cancelled item. */
  sealedResult: string | null;
}

/** Items of every batch in storage, by state (for `/metrics`). */
export type BatchItemCounts = Record<BatchItemState, number>;

export interface BatchesStorage {
  /**
   * Stores a batch (status `in_progress`, `inProgressAt = createdAt`, counts 0, `total` = the
   * number of items) and all its items (`queued`) in one transaction, writing items in pages.
   * Rejects when the account or key does not exist or the id is taken.
   */
  createBatch(input: {
    id: string;
    accountId: string;
    keyId: string;
    endpoint: BatchEndpoint;
    metadata: Record<string, string> | null;
    items: readonly NewBatchItem[];
    now: EpochMs;
  }): Promise<Batch>;

  /** One batch of the account, or `null`. */
  getBatch(accountId: string, batchId: string): Promise<Batch | null>;

  /**
   * The account's batches, newest first (by `createdAt`, then id descending); `after` = a batch id:
   * only batches older than it (none when it is not the account's). Returns up to `limit` + 1, so
   * the caller can tell whether there are more.
   */
  listBatches(accountId: string, options: { limit: number; after?: string }): Promise<Batch[]>;

  /**
   * Claims up to `limit` items for `owner`, atomically (two claimers never get the same item):
   * `queued` items of `in_progress` batches, oldest batch first and in index order, and `running`
   * items of any unfinished batch whose lease has expired (`leaseUntil <= now`). Each claimed item
   * becomes `running` with `leaseOwner = owner`, `leaseUntil = now + leaseMs`, `attempts + 1`.
   * Postgres: `FOR UPDATE SKIP LOCKED`, so concurrent claimers skip each other's rows instead of
   * waiting.
   */
  claimBatchItems(input: {
    owner: string;
    now: EpochMs;
    leaseMs: number;
    limit: number;
  }): Promise<ClaimedBatchItem[]>;

  /**
   * Extends the lease of every `running` item `owner` holds to `now + leaseMs`; returns how many.
   * Items whose lease another worker has taken over are not touched.
   */
  renewBatchLeases(input: { owner: string; now: EpochMs; leaseMs: number }): Promise<number>;

  /**
   * Finishes a `running` item `owner` holds: state `completed` or `failed` with its sealed result,
   * or `cancelled` (no result: its batch was cancelled before it started), and in the same
   * transaction counts it on the batch (`completed` / `failed`; a cancelled item counts in
   * neither) and, when no item of the batch is `queued` or `running` any more, ends the batch:
   * `in_progress` → `completed` (`completedAt = now`), `cancelling` → `cancelled`
   * (`cancelledAt = now`). False (and nothing changed) when the item is not `running` under
   * `owner` (its lease was lost).
   */
  finishBatchItem(input: {
    batchId: string;
    index: number;
    owner: string;
    state: 'completed' | 'failed' | 'cancelled';
    sealedResult: string | null;
    now: EpochMs;
  }): Promise<boolean>;

  /**
   * Cancels a batch of the account in one transaction: an `in_progress` (or `validating`) batch
   * becomes `cancelling`, every `queued` item `cancelled`; when none of its items is `running`,
   * the batch is `cancelled` at once (`cancelledAt = now`). A batch already `cancelling`,
   * `cancelled` or `completed` is returned unchanged. `null` when the account has no such batch.
   */
  cancelBatch(accountId: string, batchId: string, now: EpochMs): Promise<Batch | null>;

  /**
   * A page of the batch's finished items (`completed`, `failed`, `cancelled`) in index order,
   * with index greater than `afterIndex` (-1 for the first page), up to `limit`. The caller checks
   * the batch belongs to the account first.
   */
  listFinishedBatchItems(
    batchId: string,
    options: { afterIndex: number; limit: number },
  ): Promise<FinishedBatchItem[]>;

  /** Items of every batch in storage, by state. */
  countBatchItems(): Promise<BatchItemCounts>;
}
