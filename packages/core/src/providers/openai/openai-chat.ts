import { bearerPost } from '../bearer-post.js';
import type { ChatCompletion, ChatRequest, TokenUsage } from '../chat-types.js';
import { guardedBody } from '../guarded-body.js';
import type { ChatCapability, CompletionStream, UpstreamTarget } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { sendUpstream, type UpstreamChannel, type UpstreamPost } from '../send-upstream.js';
import { networkFailure } from '../upstream-error.js';
import { buildOpenAIRequest } from './build-openai-request.js';
import { convertOpenAIStream } from './convert-openai-stream.js';
import { convertOpenAIUsage } from './convert-openai-usage.js';
import { describeError } from './openai-dialect.js';
import { openAICompletionSchema } from './openai-wire-schemas.js';

/**
 * OpenAI chat completions: `POST {baseUrl}/chat/completions` with the caller's request passed
 * through (see `buildOpenAIRequest`). The JSON answer is returned as received; a stream is read
 * through `guardedBody`, and breaking off while iterating throws `UpstreamError('network')`.
 */
export function openAIChat(channel: UpstreamChannel): ChatCapability {
  const post = (request: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamPost =>
    bearerPost(target.provider, '/chat/completions', buildOpenAIRequest(request, target, { stream }));

  return {
    async complete(request, target, call) {
      const answer = await postUpstreamJson(
        channel,
        post(request, target, false),
        openAICompletionSchema,
        call,
      );
      return { completion: answer.json as ChatCompletion, usage: convertOpenAIUsage(answer.data.usage) };
    },

    async stream(request, target, call): Promise<CompletionStream> {
      const response = await sendUpstream(channel, post(request, target, true), call);
      let usage: TokenUsage | null = null;
      const body = guardedBody(response, call.signal, (error) =>
        networkFailure(error, call.signal, `the upstream stream broke off: ${describeError(error)}`),
      );
      const chunks = convertOpenAIStream(body, (reported) => {
        usage = reported;
      });
      return { chunks, usage: () => usage };
    },
  };
}
