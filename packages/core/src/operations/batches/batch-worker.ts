import type { GatewayDeps } from '../../gateway-deps.js';
import { newId } from '../../ids.js';
import type { ClaimedBatchItem } from '../../storage/batches.js';
import { finishBatchItem, type ItemOutcome, runBatchItem, type ServeBatchItem } from './run-batch-item.js';

export interface BatchWorkerOptions {
  /** Items run at once by this process (config `batches.concurrency`). */
  concurrency: number;
  /** How long a claim lasts unless renewed (config `batches.lease_ms`); renewed every third of it. */
  leaseMs: number;
  /** How often an idle worker looks for work: new batches of other processes, expired leases. */
  pollMs: number;
}

export const DEFAULT_BATCH_WORKER: BatchWorkerOptions = { concurrency: 8, leaseMs: 30_000, pollMs: 1_000 };

/** Items finished here between two progress lines of one batch. */
const PROGRESS_EVERY = 1_000;
/** Longest wait between two tries of an item step that failed on storage. */
const MAX_RETRY_MS = 30_000;

interface BatchWorker {
  /** Starts the worker (once) and looks for work now. */
  wake(): void;
  /** Stops claiming and waits for the items in flight here to be finished. */
  close(): Promise<void>;
}

type WorkerDeps = Pick<GatewayDeps, 'storage' | 'batchSealer' | 'now' | 'logger'>;

/**
 * The background runner of batch items in one process. It claims items in pages (at most
 * `concurrency` in flight, refilled when half are done), runs each through the gateway's own
 * handler, renews the leases of what it holds, and finishes each item under its lease. Memory holds
 * only the items in flight, whatever the size of a batch. A step that fails on storage is tried
 * again with backoff, the item kept (and its lease renewed) meanwhile; running it again is safe
 * because a settled item is known by its request id. On `close()` nothing new is claimed, and items
 * in flight finish; one whose storage is still failing is left to its lease, for any process.
 */
export function createBatchWorker(
  deps: WorkerDeps,
  serve: ServeBatchItem,
  options: BatchWorkerOptions,
): BatchWorker {
  const owner = newId('wrk');
  const inFlight = new Set<Promise<void>>();
  /** Items finished here per batch since its last progress line (account id kept for the lookup). */
  const progress = new Map<string, { accountId: string; finished: number }>();
  let started = false;
  let closed = false;
  /** The claim under way, if any. */
  let claiming: Promise<void> | null = null;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let renewTimer: ReturnType<typeof setInterval> | undefined;
  let wakeOnClose: () => void = () => {};
  const closing = new Promise<void>((resolve) => {
    wakeOnClose = resolve;
  });

  const errorName = (error: unknown) => ({
    name: (error as Error)?.name,
    code: (error as { code?: unknown })?.code,
  });

  function fill(): Promise<void> {
    const room = options.concurrency - inFlight.size;
    // Claims come in pages: wait until half the slots are free (one claim per item would cost a
    // round trip each).
    if (closed || claiming || room <= 0 || (inFlight.size > 0 && room * 2 < options.concurrency)) {
      return Promise.resolve();
    }
    claiming = claim(room).finally(() => {
      claiming = null;
    });
    return claiming;
  }

  /** One claim of up to `room` items; what it gets starts at once (`close()` waits for it too). */
  async function claim(room: number): Promise<void> {
    let items: ClaimedBatchItem[] = [];
    try {
      items = await deps.storage.claimBatchItems({
        owner,
        now: deps.now(),
        leaseMs: options.leaseMs,
        limit: room,
      });
    } catch (error) {
      deps.logger.error({ err: errorName(error) }, 'claiming batch items failed; trying again shortly');
    }
    for (const item of items) start(item);
    if (items.length === room) queueMicrotask(() => void fill());
    else if (items.length === 0) void reportProgress();
    poll();
  }

  function poll(): void {
    if (closed || pollTimer !== undefined) return;
    pollTimer = setTimeout(() => {
      pollTimer = undefined;
      void fill();
    }, options.pollMs);
    unref(pollTimer);
  }

  function start(item: ClaimedBatchItem): void {
    if (item.attempts > 1) {
      deps.logger.info(
        { batchId: item.batchId, index: item.index, requestId: item.requestId, attempts: item.attempts },
        'batch item claimed again (its earlier lease expired)',
      );
    }
    const run = runToEnd(item).finally(() => {
      inFlight.delete(run);
      void fill();
    });
    inFlight.add(run);
  }

  async function runToEnd(item: ClaimedBatchItem): Promise<void> {
    const outcome = await retrying(item, 'running', (tries) =>
      // A retried run looks its request id up first, as a run after an expired lease does.
      runBatchItem(tries === 0 ? item : { ...item, attempts: item.attempts + tries }, deps, serve),
    );
    if (outcome === undefined) return;
    const finished = await retrying(item, 'finishing', () => finishBatchItem(item, owner, outcome, deps));
    if (finished === false) {
      deps.logger.warn(
        { batchId: item.batchId, index: item.index, requestId: item.requestId },
        'batch item lease lost before it was finished; its outcome is left to the holder of the lease',
      );
    }
    if (finished) count(item, outcome);
  }

  /** `step` until it resolves, backing off on failures; `undefined` when the worker closes first. */
  async function retrying<T>(
    item: ClaimedBatchItem,
    what: string,
    step: (tries: number) => Promise<T>,
  ): Promise<T | undefined> {
    for (let tries = 0; ; tries++) {
      try {
        return await step(tries);
      } catch (error) {
        deps.logger.error(
          { batchId: item.batchId, index: item.index, requestId: item.requestId, err: errorName(error) },
          `${what} a batch item failed; trying again`,
        );
      }
      if (closed) return undefined;
      const wait = Math.min(MAX_RETRY_MS, 250 * 2 ** tries);
      await Promise.race([closing, new Promise((resolve) => unref(setTimeout(resolve, wait)))]);
      if (closed) return undefined;
    }
  }

  function count(item: ClaimedBatchItem, outcome: ItemOutcome): void {
    const seen = progress.get(item.batchId) ?? { accountId: item.accountId, finished: 0 };
    seen.finished += 1;
    progress.set(item.batchId, seen);
    if (seen.finished >= PROGRESS_EVERY) void reportProgress(item.batchId);
    if (outcome.state === 'failed') {
      deps.logger.debug?.({ batchId: item.batchId, requestId: item.requestId }, 'batch item failed');
    }
  }

  /** One log line per batch this process worked on since its last line: where the batch stands. */
  async function reportProgress(only?: string): Promise<void> {
    const batchIds = only === undefined ? [...progress.keys()] : [only];
    for (const batchId of batchIds) {
      const seen = progress.get(batchId);
      if (!seen) continue;
      progress.delete(batchId);
      try {
        const batch = await deps.storage.getBatch(seen.accountId, batchId);
        if (!batch) continue;
        deps.logger.info(
          {
            batchId,
            status: batch.status,
            total: batch.total,
            completed: batch.completed,
            failed: batch.failed,
            finishedHere: seen.finished,
          },
          `batch ${batch.status === 'in_progress' ? 'progress' : batch.status}`,
        );
      } catch (error) {
        deps.logger.error({ batchId, err: errorName(error) }, 'reading batch progress failed');
      }
    }
  }

  async function renew(): Promise<void> {
    if (inFlight.size === 0) return;
    try {
      await deps.storage.renewBatchLeases({ owner, now: deps.now(), leaseMs: options.leaseMs });
    } catch (error) {
      deps.logger.error({ err: errorName(error) }, 'renewing batch leases failed; trying again');
    }
  }

  return {
    wake() {
      if (closed) return;
      if (!started) {
        started = true;
        renewTimer = setInterval(() => void renew(), Math.max(10, Math.floor(options.leaseMs / 3)));
        unref(renewTimer);
      }
      void fill();
    },
    async close() {
      closed = true;
      wakeOnClose();
      clearTimeout(pollTimer);
      // A claim under way when the worker closed still starts what it got: wait for that too.
      await claiming;
      await Promise.allSettled([...inFlight]);
      clearInterval(renewTimer);
      await reportProgress();
    },
  };
}

/** A background timer must not keep a host process alive (Node, Bun and Deno timers have `unref`). */
function unref(timer: unknown): void {
  (timer as { unref?: () => void }).unref?.();
}
