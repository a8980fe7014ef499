import { encodeText, SSE_HEADERS } from '../../http/responses.js';
import { type Charge, gatewayCostView, type ServedView } from '../../metering/price-usage.js';
import { formatMicrosAsUsd } from '../../money/micros.js';
import type { PlannedCall } from '../../pipeline/call.js';
import type { CallContext } from '../../pipeline/feature.js';
import { chargeLinesOf } from '../../pipeline/features-of.js';
import type { InferenceBody, InferenceOperation } from '../../pipeline/inference-operation.js';
import { closeRecord, writeRecordAndSpan } from '../../pipeline/request-log.js';
import type { RequestRecord } from '../../storage/metering-types.js';
import type { CachedAnswer } from './cached-answer.js';

/**
 * A response-cache hit (product.md "Response cache"): nothing is held, sent upstream or charged. The
 * record says `cache_hit` with the original answer's model, provider and counts, cost 0, `waived:
 * "cache hit"` and the original cost saved; the answer is the cached one, as JSON or, when the
 * request asked for a stream, replayed as the chunks a stream of it would have sent.
 */
export async function answerFromCache<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  record: RequestRecord,
  input: Pick<CallContext, 'deps' | 'requestId'>,
  planned: PlannedCall<Body>,
  cached: CachedAnswer,
  streams: boolean,
): Promise<Response> {
  const { deps, requestId } = input;
  const { usage } = cached;
  Object.assign(record, {
    model: cached.model,
    provider: cached.provider,
    promptTokens: usage.promptTokens,
    completionTokens: usage.completionTokens,
    cachedTokens: usage.cachedTokens,
    costMicros: 0,
    savedMicros: cached.costMicros,
    waived: 'cache hit',
    cacheHit: true,
    finishReason: cached.finishReason,
  } satisfies Partial<RequestRecord>);
  closeRecord(record, deps.now());
  await writeRecordAndSpan(deps, record, op.spanOperation);

  const charge: Charge = {
    costMicros: 0,
    savedMicros: cached.costMicros,
    waived: 'cache hit',
    tokenMicros: 0,
    nonTokenMicros: 0,
  };
  const served: ServedView = {
    requestId,
    model: cached.model,
    provider: cached.provider,
    attempts: 0,
    requestedModel: planned.plan.requested.id,
    ...(planned.transforms && { transforms: planned.transforms }),
  };
  const gateway = gatewayCostView(charge, served, chargeLinesOf(deps));
  const headers = { 'X-Gateway-Cache': 'HIT' };
  const answer = op.recall?.(cached.answer, served) ?? cached.answer;
  const streaming = op.stream;
  if (!streams || !streaming?.replay) {
    return deps.jsonResponse({ ...answer, gateway }, 200, {
      ...headers,
      'X-Gateway-Cost-Usd': formatMicrosAsUsd(0),
    });
  }
  const writer = streaming.writer(served, planned.body);
  let text = '';
  for (const chunk of streaming.replay(answer)) text += writer.write(chunk).text;
  text += writer.end({
    finishReason: cached.finishReason,
    usage,
    gateway,
    error: null,
    createdAt: record.createdAt,
  });
  const bytes = encodeText(text);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { ...SSE_HEADERS, ...headers } });
}
