import { z } from 'zod';
import { bearerPost } from '../bearer-post.js';
import type { EmbeddingsResult } from '../inference-types.js';
import type { EmbeddingsCapability } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import type { UpstreamChannel } from '../send-upstream.js';
import { upstreamBody } from './build-openai-request.js';

/** An embeddings answer, checked as far as the gateway reads it; `data` items pass unchecked. */
const embeddingsAnswerSchema = z.looseObject({
  object: z.literal('list'),
  data: z.array(z.unknown()),
  usage: z.unknown().optional(),
});

const promptTokensSchema = z.looseObject({ prompt_tokens: z.number().int().nonnegative() });

/**
 * OpenAI embeddings: `POST {baseUrl}/embeddings` with the caller's body (see `upstreamBody`), so
 * `encoding_format`, `dimensions` and vendor fields reach the upstream untouched. The answer is
 * returned as received (float vectors or base64 strings alike), with `usage.prompt_tokens`; a usage
 * the gateway cannot read gives `null` (the caller then estimates rather than bill a guess).
 */
export function openAIEmbeddings(channel: UpstreamChannel): EmbeddingsCapability {
  return {
    async embed(request, target, call) {
      const post = bearerPost(target.provider, '/embeddings', upstreamBody(request, target));
      const answer = await postUpstreamJson(channel, post, embeddingsAnswerSchema, call);
      const usage = promptTokensSchema.safeParse(answer.data.usage);
      return {
        response: answer.json as EmbeddingsResult['response'],
        promptTokens: usage.success ? usage.data.prompt_tokens : null,
      };
    },
  };
}
