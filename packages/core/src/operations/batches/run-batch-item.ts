import { authenticateKeyId } from '../../auth/authenticate.js';
import { ERROR_CODES, type ErrorCode } from '../../errors/error-codes.js';
import { errorEnvelope, GatewayError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import type { OnBehalfOf } from '../../http/handle-request.js';
import type { BatchEndpoint, ClaimedBatchItem } from '../../storage/batches.js';
import type { RequestRecord } from '../../storage/metering-types.js';
import type { ItemResult } from './batch-view.js';
import { itemSealing } from './item-sealing.js';

/**
 * The gateway's own request handler, called for one item: `POST <endpoint>` with the item's body,
 * as the batch's key, under the item's request id, without a rate-limit hit. Every stage a direct
 * request goes through (preset, validation, pre-flight, routing, settle, record, span) is the same.
 */
export type ServeBatchItem = (endpoint: BatchEndpoint, body: string, as: OnBehalfOf) => Promise<Response>;

/** What became of an item: its final state and the answer it keeps (`null` when cancelled). */
export interface ItemOutcome {
  state: 'completed' | 'failed' | 'cancelled';
  result: ItemResult | null;
}

/**
 * Runs one claimed item and says what became of it. An item claimed again (after a lease expired,
 * or after this worker failed to finish it) is first looked up by its request id: if an earlier run
 * settled, that outcome is kept and nothing runs again (the request id is the anchor of its one
 * charge; storage refuses a second record for it). An item of a batch being cancelled that has not
 * run is cancelled. Storage failures reject; running the item again is then safe for that reason.
 */
export async function runBatchItem(
  item: ClaimedBatchItem,
  deps: Pick<GatewayDeps, 'storage' | 'batchSealer' | 'now'>,
  serve: ServeBatchItem,
): Promise<ItemOutcome> {
  if (item.attempts > 1) {
    const earlier = await deps.storage.getRequestRecord(item.accountId, item.requestId);
    if (earlier && earlier.status !== 'in_progress') {
      return { state: earlier.httpStatus < 300 ? 'completed' : 'failed', result: resultFromRecord(earlier) };
    }
  }
  if (item.batchStatus === 'cancelling' || item.batchStatus === 'cancelled') {
    return { state: 'cancelled', result: null };
  }
  const result = await answer(item, deps, serve);
  return { state: result.status_code < 300 ? 'completed' : 'failed', result };
}

/** Finishes the item under the worker's lease, its answer sealed; false when the lease was lost. */
export async function finishBatchItem(
  item: ClaimedBatchItem,
  owner: string,
  outcome: ItemOutcome,
  deps: Pick<GatewayDeps, 'storage' | 'batchSealer' | 'now'>,
): Promise<boolean> {
  const sealedResult =
    outcome.result === null
      ? null
      : await itemSealing.sealResult(deps.batchSealer, item.accountId, item.requestId, outcome.result);
  return deps.storage.finishBatchItem({
    batchId: item.batchId,
    index: item.index,
    owner,
    state: outcome.state,
    sealedResult,
    now: deps.now(),
  });
}

async function answer(
  item: ClaimedBatchItem,
  deps: Pick<GatewayDeps, 'storage' | 'batchSealer' | 'now'>,
  serve: ServeBatchItem,
): Promise<ItemResult> {
  let auth: OnBehalfOf['auth'];
  try {
    auth = await authenticateKeyId(deps.storage, item.accountId, item.keyId, deps.now());
  } catch (error) {
    if (!(error instanceof GatewayError) || error.code === 'storage_unavailable') throw error;
    return { status_code: error.status, body: errorEnvelope(error, item.requestId) };
  }
  const body = await itemSealing.openBody(deps.batchSealer, item.accountId, item.requestId, item.sealedBody);
  const response = await serve(item.endpoint, body, { requestId: item.requestId, auth });
  const text = await response.text();
  const answer = parseAnswer(text);
  // The storage failed the run: the worker tries it again, as it does any step storage failed.
  if (response.status === 503 && errorCodeOf(answer) === 'storage_unavailable') {
    throw new GatewayError('storage_unavailable', 'The batch item could not run: storage failed.');
  }
  return { status_code: response.status, body: answer };
}

/** The answer's JSON (every non-streamed answer and error is JSON); text as is otherwise. */
function parseAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The outcome of an item whose earlier run settled before its process stopped. Its error envelope is
 * rebuilt from the record; a success's answer was never stored (answers are kept only with the
 * finished item), so the line says so and points at the record.
 */
function resultFromRecord(record: RequestRecord): ItemResult {
  if (record.httpStatus < 300) {
    return {
      status_code: record.httpStatus,
      body: null,
      error: {
        code: 'result_lost',
        message: `This request was answered and charged (see GET /v1/generation?id=${record.id}), but the server stopped before its answer was kept with the batch.`,
      },
    };
  }
  const code = (record.errorCode ?? 'internal_error') as ErrorCode;
  return {
    status_code: record.httpStatus,
    body: {
      error: {
        message: record.errorMessage ?? '',
        type: ERROR_CODES[code]?.type ?? 'api_error',
        code,
        request_id: record.id,
      },
    },
  };
}

function errorCodeOf(answer: unknown): unknown {
  return (answer as { error?: { code?: unknown } } | null)?.error?.code;
}
