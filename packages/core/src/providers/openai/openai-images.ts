import { z } from 'zod';
import { bearerPost } from '../bearer-post.js';
import type { ImagesResult } from '../inference-types.js';
import type { ImagesCapability } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import type { UpstreamChannel } from '../send-upstream.js';
import { upstreamBody } from './build-openai-request.js';

/** An image generation answer: `data` holds one item per image (`url` or `b64_json`), unchecked. */
const imagesAnswerSchema = z.looseObject({
  created: z.number(),
  data: z.array(z.unknown()),
});

/**
 * OpenAI image generation: `POST {baseUrl}/images/generations` with the caller's body (see
 * `upstreamBody`); `response_format`, `size`, `quality` and vendor fields pass through untouched.
 * The answer is returned as received, `usage` (GPT image models) included.
 */
export function openAIImages(channel: UpstreamChannel): ImagesCapability {
  return {
    async generate(request, target, call) {
      const post = bearerPost(target.provider, '/images/generations', upstreamBody(request, target));
      const answer = await postUpstreamJson(channel, post, imagesAnswerSchema, call);
      return { response: answer.json as ImagesResult['response'] };
    },
  };
}
