import { estimateTokens } from '../../metering/estimate-worst-case.js';
import { type DemoJsonAnswer, invalidRequest } from './demo-json-answer.js';
import { demoTerms } from './demo-terms.js';

/**
 * `POST /rerank` of the demo upstream, in the Jina/vLLM shape the OpenAI adapter reads
 * (`{model, query, documents, top_n?, return_documents?}` → `{results, usage}`): each document
 * scored by {@link demoRelevance}, best first (ties in the documents' order), cut to `top_n`, with
 * the document's text when `return_documents` is true.
 */
export function demoRerank(body: Record<string, unknown>): DemoJsonAnswer {
  const { query, documents } = body;
  if (
    typeof query !== 'string' ||
    !Array.isArray(documents) ||
    !documents.every((d) => typeof d === 'string')
  ) {
    return invalidRequest('the rerank body needs a query and documents as strings');
  }
  const ranked = (documents as string[])
    .map((text, index) => ({ index, relevance_score: demoRelevance(query, text), text }))
    .sort((a, b) => b.relevance_score - a.relevance_score);
  const topN = typeof body.top_n === 'number' && body.top_n > 0 ? body.top_n : ranked.length;
  const results = ranked.slice(0, topN).map(({ index, relevance_score, text }) => ({
    index,
    relevance_score,
    ...(body.return_documents === true && { document: { text } }),
  }));
  const tokens = estimateTokens(query, ...(documents as string[]));
  return {
    status: 200,
    body: { model: String(body.model ?? 'demo'), results, usage: { total_tokens: tokens } },
  };
}

/**
 * A document's relevance to a query, from 0 to 1: the share of the query's distinct words the
 * document contains (case-insensitive), rounded to 4 decimals. 0 when the query has no word.
 */
export function demoRelevance(query: string, document: string): number {
  const wanted = new Set(demoTerms(query));
  if (wanted.size === 0) return 0;
  const present = new Set(demoTerms(document));
  let found = 0;
  for (const term of wanted) if (present.has(term)) found++;
  return Math.round((found / wanted.size) * 10_000) / 10_000;
}
