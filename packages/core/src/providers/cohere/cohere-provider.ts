import { z } from 'zod';
import { bearerPost } from '../bearer-post.js';
import type { HttpClient } from '../http-client.js';
import type { RerankRequest } from '../inference-types.js';
import { openAIDialect } from '../openai/openai-dialect.js';
import type { ProviderAdapter, UpstreamTarget } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { documentTexts, rankedResults, rerankResultSchema } from '../rerank-wire.js';
import type { UpstreamChannel } from '../send-upstream.js';

export interface CohereProviderOptions {
  /** The clock `Retry-After` dates are measured against; defaults to `Date.now`. */
  now?: () => number;
}

/** A v2 rerank answer: `{id, results, meta: {billed_units: {search_units}}}`, checked as far as read. */
const cohereRerankAnswerSchema = z.looseObject({
  id: z.string().nullish(),
  results: z.array(rerankResultSchema),
  meta: z
    .looseObject({
      billed_units: z.looseObject({ search_units: z.number().nonnegative().nullish() }).nullish(),
    })
    .nullish(),
});

/**
 * The Cohere adapter (rerank only): `POST {baseUrl}/rerank` in the v2 shape, so `baseUrl` is
 * `https://api.cohere.com/v2`. Errors are Cohere's `{message}` bodies, read like an OpenAI-style
 * server's. The billed search units come back as Cohere reported them; the rest of the failure
 * rules are `sendUpstream`'s and `readUpstreamJson`'s.
 */
export function createCohereProvider(
  http: HttpClient,
  options: CohereProviderOptions = {},
): Required<Pick<ProviderAdapter, 'rerank'>> {
  const channel: UpstreamChannel = { http, dialect: openAIDialect, now: options.now ?? Date.now };
  return {
    rerank: {
      async rerank(request, target, call) {
        const post = bearerPost(target.provider, '/rerank', cohereRerankBody(request, target));
        const { data } = await postUpstreamJson(channel, post, cohereRerankAnswerSchema, call);
        return {
          id: data.id ?? null,
          results: rankedResults(data.results, request.documents.length, target.provider),
          searchUnits: data.meta?.billed_units?.search_units ?? null,
        };
      },
    },
  };
}

/**
 * The v2 request: `{model, query, documents, top_n?}` with the documents as strings. v2 has no
 * `return_documents` (it never returns them), and the caller's other fields are not sent.
 */
function cohereRerankBody(request: RerankRequest, target: UpstreamTarget): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: target.upstreamModel,
    query: request.query,
    documents: documentTexts(request.documents),
  };
  if (request.top_n !== undefined) body.top_n = request.top_n;
  return body;
}
