import type { InferenceOperation } from '../../inference/inference-operation.js';
import { priceWorstCase } from '../../metering/estimate-worst-case.js';
import { meteredUsage } from '../../metering/usage.js';
import type { RerankRequest, RerankResult } from '../../providers/inference-types.js';
import { documentTexts } from '../../providers/rerank-wire.js';

/** Documents per search unit: one query over up to 100 documents. */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;

/** ⌈documents / 100⌉: the search units of a request when the upstream reports none. */
export function searchUnitsOf(body: RerankRequest): number {
  return Math.ceil(body.documents.length / DOCUMENTS_PER_SEARCH_UNIT);
}

/**
 * `POST /v1/rerank` as a metered operation: held at ⌈documents / 100⌉ search units at the highest
 * `search` price; charged for the units the upstream billed, else ⌈documents / 100⌉.
 */
export const rerankOperation: InferenceOperation<RerankRequest, RerankResult> = {
  endpoint: 'rerank',
  path: '/v1/rerank',
  spanOperation: 'rerank',
  modelType: 'rerank',
  capability: 'rerank',
  idempotent: true,
  worstCase: (body, routes) =>
    priceWorstCase(
      meteredUsage({ searchUnits: searchUnitsOf(body) }),
      routes.map((r) => r.endpoint.pricing),
    ),
  call: (adapter, body, target, options) => adapter.rerank!.rerank(body, target, options),
  meter: (answer, body) => ({
    usage: meteredUsage({ searchUnits: answer.searchUnits ?? searchUnitsOf(body) }),
    producedOutput: true,
    finishReason: null,
  }),
  respond(answer, body, served, { usage }) {
    // The adapter gave indexes the request has, best first (rerank-wire.ts); at most `top_n` go back.
    const results = typeof body.top_n === 'number' ? answer.results.slice(0, body.top_n) : answer.results;
    const texts = body.return_documents === true ? documentTexts(body.documents) : null;
    return {
      id: answer.id ?? served.requestId,
      model: served.model,
      results: results.map((r) => ({
        index: r.index,
        relevance_score: r.relevance_score,
        ...(texts && { document: { text: texts[r.index]! } }),
      })),
      usage: { search_units: usage.searchUnits },
    };
  },
};
