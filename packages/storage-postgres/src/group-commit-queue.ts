/**
 * Group commit on the client: calls made in the same turn of the event loop are sent together, as
 * one batch, to a statement that runs them all in one transaction (`postgres-metering.ts` uses it
 * for the reserves and settles, `rate-limit-hit-queue.ts` for rate-limit hits). A batch
 * is sent when the loop reaches its check phase (`setImmediate`), or as soon as it holds
 * {@link MAX_BATCH} calls, but only one at a time: the calls made while a batch is in flight go
 * together in the next one, sent when it has answered. Each caller gets its own call's result or
 * error, and only once the batch's statement answered, i.e. after its transaction committed.
 *
 * **Lock order.** A batch takes the lock of each row it touches (an account; a rate-limit window,
 * by its subject) and keeps them all until its COMMIT. Two batches (of this process or another) that
 * lock rows A and B in opposite orders would deadlock, so every batch is sorted by that row's key
 * before it is sent (a stable sort: calls of one row keep the order they were made in), and all
 * processes take those locks in the same order.
 */

/** Most calls in one batch: each is a subtransaction, and Postgres caches 64 subxids per transaction. */
export const MAX_BATCH = 64;

/** What one call of a batch came to: its value, or the error it alone failed with. */
export type CallOutcome<Result> = { ok: true; value: Result } | { ok: false; error: Error };

/**
 * Sends a batch of calls (already in lock order) and answers one outcome per call, in the same
 * order. Rejecting fails every call of the batch with that error.
 */
export type SendBatch<Call, Result> = (calls: readonly Call[]) => Promise<CallOutcome<Result>[]>;

interface Pending<Call, Result> {
  readonly call: Call;
  resolve(value: Result): void;
  reject(error: unknown): void;
}

export class GroupCommitQueue<Call, Result> {
  readonly #send: SendBatch<Call, Result>;
  /** The key of the row a call locks (an account id, a rate-limit subject): the sort key of a batch. */
  readonly #lockKeyOf: (call: Call) => string;
  #pending: Pending<Call, Result>[] = [];
  #scheduled = false;
  /** The batch sent and not yet answered, if any. */
  #inFlight: Promise<void> | null = null;

  constructor(send: SendBatch<Call, Result>, lockKeyOf: (call: Call) => string) {
    this.#send = send;
    this.#lockKeyOf = lockKeyOf;
  }

  /** Queues `call` for the next batch; resolves with its result once that batch has committed. */
  add(call: Call): Promise<Result> {
    return new Promise<Result>((resolve, reject) => {
      this.#pending.push({ call, resolve, reject });
      if (this.#inFlight !== null) return;
      if (this.#pending.length >= MAX_BATCH) this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          this.#flush();
        });
      }
    });
  }

  /** Sends what is queued and resolves once every call queued so far has been answered. */
  async drain(): Promise<void> {
    this.#flush();
    while (this.#inFlight !== null) await this.#inFlight;
  }

  /**
   * Sends the next batch unless one is in flight: one batch at a time per queue, so the calls that
   * arrive while a batch waits for its account locks and its COMMIT gather into the next one rather
   * than queueing behind it in batches of their own (each would wait for the lock and pay a flush).
   */
  #flush(): void {
    if (this.#inFlight !== null || this.#pending.length === 0) return;
    const batch = this.#pending.splice(0, MAX_BATCH);
    this.#inFlight = this.#run(batch).finally(() => {
      this.#inFlight = null;
      this.#flush();
    });
  }

  async #run(batch: Pending<Call, Result>[]): Promise<void> {
    const ordered = batch
      .map((pending, index) => ({ pending, index, key: this.#lockKeyOf(pending.call) }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index))
      .map((entry) => entry.pending);
    let outcomes: CallOutcome<Result>[];
    try {
      outcomes = await this.#send(ordered.map((pending) => pending.call));
      if (outcomes.length !== ordered.length) {
        throw new Error(`a batch of ${ordered.length} calls answered ${outcomes.length} results`);
      }
    } catch (error) {
      for (const pending of ordered) pending.reject(error);
      return;
    }
    ordered.forEach((pending, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) pending.resolve(outcome.value);
      else pending.reject(outcome.error);
    });
  }
}
