import { z } from 'zod';
import { bearerPost } from '../bearer-post.js';
import type { HttpClient } from '../http-client.js';
import { openAIDialect } from '../openai/openai-dialect.js';
import type { ProviderAdapter } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { rankedResults, rerankResultSchema, rerankWireBody } from '../rerank-wire.js';
import type { UpstreamChannel } from '../send-upstream.js';

interface CohereProviderOptions {
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
        const post = bearerPost(
          target.provider,
          '/rerank',
          rerankWireBody(request, target, { returnDocuments: false }),
        );
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
