import { countHitNow, type HitParams, type QueryContext } from '@tollgate/storage-kysely';
import { type BatchRow, sendBatch } from './batch-statement.js';
import { GroupCommitQueue } from './group-commit-queue.js';

/*
 * Rate-limit hits committed in groups: the hits of one turn of the event loop go out as one call of
 * `tollgate_count_hits`
 * (each call the hit's `HitParams` as they are), which counts each, in order, with the upsert
 * `countHit` runs on its own, all in the one transaction of the statement (the table is UNLOGGED,
 * so its COMMIT waits for no flush). Batches are sorted by subject, so two batches lock their
 * window rows in one order. Should the statement fail (it wrote nothing), each hit of the batch is
 * counted again on its own.
 */

const HITS_SQL = 'select ord, counted, error, code from tollgate_count_hits($1::jsonb)';

/** The hits queue of one storage. */
export interface HitQueue {
  /** Resolves with whether the hit was counted, once its batch committed. */
  add(params: HitParams): Promise<boolean>;
  drain(): Promise<void>;
}

/** The hits queue of one storage, counting on `ctx`'s database. */
export function createHitQueue(ctx: QueryContext): HitQueue {
  const queue = new GroupCommitQueue<HitParams, { counted: boolean }>(
    (calls) =>
      sendBatch<{ counted: boolean }>(
        ctx,
        { batch: HITS_SQL, perCall: (all) => countEachAlone(ctx, all as HitParams[]) },
        calls,
      ),
    (call) => call.subject,
  );
  return {
    add: (params: HitParams) => queue.add(params).then((row) => row.counted),
    drain: () => queue.drain(),
  };
}

/** Hits counted one by one, each its own statement, in their order. */
export async function countEachAlone(
  ctx: QueryContext,
  calls: readonly HitParams[],
): Promise<({ counted: boolean } & BatchRow)[]> {
  const rows: ({ counted: boolean } & BatchRow)[] = [];
  for (const [ord, params] of calls.entries()) {
    try {
      const counted = await countHitNow(ctx, params);
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

/** The hits of a batch's reserves, each naming its reserve's position, sorted by subject (the lock order). */
export function hitsJson(reserves: readonly { hit: HitParams | null }[]): string {
  const hits = reserves.flatMap((r, reserve) => (r.hit ? [{ ...r.hit, reserve }] : []));
  hits.sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
  return JSON.stringify(hits);
}
