import type { GatewayDeps } from '../gateway-deps.js';
import type { Batch } from '../storage/batches.js';
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
  const encoder = new TextEncoder();
  let afterIndex = -1;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const page = await deps.storage.listFinishedBatchItems(batch.id, {
            afterIndex,
            limit: RESULTS_PAGE,
          });
          if (page.length === 0) {
            controller.close();
            return;
          }
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
          afterIndex = page[page.length - 1]!.index;
          controller.enqueue(encoder.encode(text));
          if (page.length < RESULTS_PAGE) controller.close();
        } catch (error) {
          deps.logger.error(
            { batchId: batch.id, err: { name: (error as Error)?.name } },
            'reading batch results failed; the stream is cut short',
          );
          controller.error(error);
        }
      },
    },
    { highWaterMark: 0 },
  );
}
