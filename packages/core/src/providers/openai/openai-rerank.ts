import { z } from 'zod';
import { bearerPost } from '../bearer-post.js';
import type { RerankCapability } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { rankedResults, rerankResultSchema, rerankWireBody } from '../rerank-wire.js';
import type { UpstreamChannel } from '../send-upstream.js';

/** A Jina/vLLM rerank answer: `{id?, model?, results, usage?: {total_tokens}}`. */
const rerankAnswerSchema = z.looseObject({
  id: z.string().nullish(),
  results: z.array(rerankResultSchema),
});

/**
 * Rerank on an OpenAI-compatible server, in the shape Jina and vLLM take: `POST {baseUrl}/rerank`
 * with `{model, query, documents, top_n?, return_documents?}`, the documents as plain strings.
 * Other request fields are not sent: rerank servers differ in what else they accept. These servers
 * report tokens, not search units, so `searchUnits` is `null` (the caller counts the documents).
 */
export function openAIRerank(channel: UpstreamChannel): RerankCapability {
  return {
    async rerank(request, target, call) {
      const post = bearerPost(
        target.provider,
        '/rerank',
        rerankWireBody(request, target, { returnDocuments: true }),
      );
      const { data } = await postUpstreamJson(channel, post, rerankAnswerSchema, call);
      return {
        id: data.id ?? null,
        results: rankedResults(data.results, request.documents.length, target.provider),
        searchUnits: null,
      };
    },
  };
}
