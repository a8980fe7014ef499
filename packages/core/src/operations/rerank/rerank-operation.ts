import { countCharacters, priceWorstCase, tokensOf } from '../../metering/estimate-worst-case.js';
import { meteredUsage, unitCount } from '../../metering/usage.js';
import type { InferenceOperation } from '../../pipeline/inference-operation.js';
import type { RerankRequest, RerankResult } from '../../providers/inference-types.js';
import { documentTexts } from '../../providers/rerank-wire.js';

/** Documents (or chunks of them) per search unit: one query over up to 100. */
const DOCUMENTS_PER_SEARCH_UNIT = 100;
/** Tokens per chunk a long document is split into for billing (Cohere's 500, about 2,000 characters). */
const TOKENS_PER_CHUNK = 500;

/** ⌈documents / 100⌉: the search units of a request when the upstream reports none. */
function searchUnitsOf(body: RerankRequest): number {
  return Math.ceil(body.documents.length / DOCUMENTS_PER_SEARCH_UNIT);
}

/**
 * The most search units a request can be billed, counted as Cohere bills them: each document, with
 * the query, split into chunks of 500 tokens (the pre-flight's estimate of tokens), and one unit
 * per 100 chunks, rounded up.
 */
function worstSearchUnits(body: RerankRequest): number {
  const query = countCharacters(body.query);
  let chunks = 0;
  for (const text of documentTexts(body.documents)) {
    const doc = countCharacters(text);
    chunks += Math.max(
      1,
      Math.ceil(tokensOf(query.ascii + doc.ascii, query.other + doc.other) / TOKENS_PER_CHUNK),
    );
  }
  return Math.ceil(chunks / DOCUMENTS_PER_SEARCH_UNIT);
}

/**
 * `POST /v1/rerank` as a metered operation: held at the search units the documents can be billed
 * ({@link worstSearchUnits}) at the highest `search` price; charged for the units the upstream
 * billed, else ⌈documents / 100⌉.
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
      meteredUsage({ units: [{ unit: 'search_unit', count: worstSearchUnits(body) }] }),
      routes.map((r) => r.endpoint.pricing),
    ),
  call: (adapter, body, target, options) => adapter.rerank!.rerank(body, target, options),
  meter: (answer, body) => ({
    usage: meteredUsage({
      units: [{ unit: 'search_unit', count: answer.searchUnits ?? searchUnitsOf(body) }],
    }),
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
      usage: { search_units: unitCount(usage, 'search_unit') },
    };
  },
};
