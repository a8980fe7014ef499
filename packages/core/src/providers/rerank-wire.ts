import { z } from 'zod';
import type { CatalogueProvider } from '../catalogue/catalogue.js';
import type { RerankRequest, RerankResult } from './inference-types.js';
import type { UpstreamTarget } from './provider-adapter.js';
import { unreadableAnswer } from './read-upstream-json.js';

/*
 * What every rerank wire format shares: Cohere, Jina and vLLM all answer with
 * `results: [{index, relevance_score, …}]`, and all take the documents as plain strings.
 */

/** One scored document of a rerank answer; `document` and vendor fields pass unchecked. */
export const rerankResultSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  relevance_score: z.number(),
});
type RerankWireResult = z.infer<typeof rerankResultSchema>;

/** The documents as plain strings: a `{text}` document becomes its text. */
export function documentTexts(documents: RerankRequest['documents']): string[] {
  return documents.map((document) => (typeof document === 'string' ? document : document.text));
}

/**
 * The answer's results reduced to `{index, relevance_score}`, best first. The sort is stable, so
 * equal scores keep the provider's order. An index past the request's documents makes the answer
 * unusable (`unreadableAnswer`, http 502): the caller would look up a document that is not there.
 */
export function rankedResults(
  results: readonly RerankWireResult[],
  documentCount: number,
  provider: CatalogueProvider,
): RerankResult['results'] {
  const stray = results.find((result) => result.index >= documentCount);
  if (stray) {
    throw unreadableAnswer(provider, `result index ${stray.index} is past the ${documentCount} documents`);
  }
  return results
    .map(({ index, relevance_score }) => ({ index, relevance_score }))
    .sort((a, b) => b.relevance_score - a.relevance_score);
}

/**
 * The request body every rerank format takes: `{model, query, documents, top_n?}` with the upstream's
 * model name and the documents as strings, plus `return_documents` where the format knows it (Jina,
 * vLLM; Cohere v2 has none). The caller's other fields are not sent.
 */
export function rerankWireBody(
  request: RerankRequest,
  target: UpstreamTarget,
  options: { returnDocuments: boolean },
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: target.upstreamModel,
    query: request.query,
    documents: documentTexts(request.documents),
  };
  if (request.top_n !== undefined) body.top_n = request.top_n;
  if (options.returnDocuments && request.return_documents !== undefined) {
    body.return_documents = request.return_documents;
  }
  return body;
}
