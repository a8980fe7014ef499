import type { GatewayDeps } from '../../gateway-deps.js';
import { pagedStream } from '../../http/paged-stream.js';
import type { Batch, FinishedBatchItem } from '../../storage/batches.js';
import { resultLine } from './batch-view.js';
import { itemSealing } from './item-sealing.js';

/** Finished items read per storage call while streaming results. */
const RESULTS_PAGE = 200;

/**
 * The batch's results as NDJSON, read from storage a page at a time as the client reads (pull), so
 * memory holds one page whatever the size of the batch. Lines come in item order; items still
 * queued or running have no line yet.
 */
export function batchResultsStream(
  deps: Pick<GatewayDeps, 'storage' | 'batchSealer' | 'logger'>,
  batch: Batch,
): ReadableStream<Uint8Array> {
  return pagedStream<FinishedBatchItem, number>({
    pageSize: RESULTS_PAGE,
    readPage: (afterIndex = -1) =>
      deps.storage.listFinishedBatchItems(batch.id, { afterIndex, limit: RESULTS_PAGE }),
    cursorOf: (item) => item.index,
    async lines(page) {
      let text = '';
      for (const item of page) {
        const result =
          item.sealedResult === null
            ? null
            : await itemSealing.openResult(
                deps.batchSealer,
                batch.accountId,
                item.requestId,
                item.sealedResult,
              );
        text += `${JSON.stringify(resultLine(item, result))}\n`;
      }
      return text;
    },
    onError: (error) =>
      deps.logger.error(
        { batchId: batch.id, err: { name: (error as Error)?.name } },
        'reading batch results failed; the stream is cut short',
      ),
  });
}
