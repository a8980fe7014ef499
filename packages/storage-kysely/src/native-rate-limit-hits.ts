import { GroupCommitQueue } from './group-commit-queue.js';
import { type BatchRow, sendBatch } from './native-batch.js';
import type { QueryContext } from './query-context.js';
import { countHitNow, type HitParams } from './rate-limit-queries.js';

/*
 * Rate-limit hits committed in groups where the dialect runs the hot path natively (Postgres): the
 * hits of one turn of the event loop go out as one call of migration 0014's `tollgate_count_hits`,
 * which counts each, in order, with the upsert `countHit` runs on its own, all in the one
 * transaction of the statement (the table is UNLOGGED, so its COMMIT waits for no flush). Batches
 * are sorted by subject, so two batches lock their window rows in one order. Should the statement
 * fail (it wrote nothing), each hit of the batch is counted again on its own.
 */

/** One hit of a batch: `HitParams` as the function's `jsonb` names them. */
interface HitCall {
  subject: string;
  window_start: number;
  previous_start: number;
  limit: number;
  remaining_ms: number;
  window_ms: number;
}

const HITS_SQL = 'select ord, counted, error, code from tollgate_count_hits($1::jsonb)';

/** The hits queue of one storage. */
export interface HitQueue {
  /** Resolves with whether the hit was counted, once its batch committed. */
  add(params: HitParams): Promise<boolean>;
  drain(): Promise<void>;
}

export function createHitQueue(ctx: QueryContext): HitQueue {
  const queue = new GroupCommitQueue<HitCall, { counted: boolean }>(
    (calls) =>
      sendBatch<{ counted: boolean }>(ctx, { batch: HITS_SQL, perCall: (all) => eachAlone(ctx, all) }, calls),
    (call) => call.subject,
  );
  return {
    add: (params: HitParams) => queue.add(hitCall(params)).then((row) => row.counted),
    drain: () => queue.drain(),
  };
}

function hitCall(p: HitParams): HitCall {
  return {
    subject: p.subject,
    window_start: p.windowStart,
    previous_start: p.previousStart,
    limit: p.limit,
    remaining_ms: p.remainingMs,
    window_ms: p.windowMs,
  };
}

/** The batch's hits counted one by one, each its own statement, in the batch's order. */
async function eachAlone(
  ctx: QueryContext,
  calls: readonly object[],
): Promise<({ counted: boolean } & BatchRow)[]> {
  const rows: ({ counted: boolean } & BatchRow)[] = [];
  for (const [ord, call] of (calls as HitCall[]).entries()) {
    try {
      const counted = await countHitNow(ctx, {
        subject: call.subject,
        windowStart: call.window_start,
        previousStart: call.previous_start,
        limit: call.limit,
        remainingMs: call.remaining_ms,
        windowMs: call.window_ms,
      });
      rows.push({ ord, counted, error: null, code: null });
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      rows.push({
        ord,
        counted: false,
        error: (error as Error).message,
        code: typeof code === 'string' ? code : null,
      });
    }
  }
  return rows;
}
