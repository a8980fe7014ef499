import type { z } from 'zod';
import type { Batch, FinishedBatchItem } from '../../storage/batches.js';
import type { batchResultLineSchema, batchViewSchema } from './batch-schemas.js';

/** What a finished item's sealed result holds: the answer it got (and, rarely, why it has none). */
export interface ItemResult {
  status_code: number;
  /** The answer or the error envelope; `null` when the answer was lost (see `error`). */
  body: unknown;
  error?: { code: string; message: string } | null;
}

const seconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

/** A batch as the API shows it: OpenAI's batch object. */
export function batchView(batch: Batch): z.output<typeof batchViewSchema> {
  return {
    id: batch.id,
    object: 'batch',
    endpoint: batch.endpoint,
    status: batch.status,
    request_counts: { total: batch.total, completed: batch.completed, failed: batch.failed },
    created_at: Math.floor(batch.createdAt / 1000),
    in_progress_at: seconds(batch.inProgressAt),
    completed_at: seconds(batch.completedAt),
    cancelled_at: seconds(batch.cancelledAt),
    metadata: batch.metadata,
  };
}

/**
 * One results line: an item that ran has its answer (`response`), whatever its status; an item
 * cancelled before it started has `error: batch_cancelled` and no response.
 */
export function resultLine(
  item: FinishedBatchItem,
  result: ItemResult | null,
): z.output<typeof batchResultLineSchema> {
  if (item.state === 'cancelled' || result === null) {
    return {
      id: item.requestId,
      custom_id: item.customId,
      response: null,
      error: {
        code: 'batch_cancelled',
        message: 'The batch was cancelled before this request started; it was not run and not charged.',
      },
    };
  }
  return {
    id: item.requestId,
    custom_id: item.customId,
    response: { status_code: result.status_code, request_id: item.requestId, body: result.body },
    error: result.error ?? null,
  };
}
