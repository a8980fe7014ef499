import type { ChatRequest } from '../chat-types.js';
import { guardedBody } from '../guarded-body.js';
import type { HttpClient } from '../http-client.js';
import type { ChatCapability, ProviderAdapter, UpstreamTarget } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { sendUpstream, type UpstreamChannel, type UpstreamPost } from '../send-upstream.js';
import { UpstreamError } from '../upstream-error.js';
import { anthropicDialect, describeError } from './anthropic-dialect.js';
import { anthropicHeaders } from './anthropic-headers.js';
import { anthropicMessages } from './anthropic-messages.js';
import { anthropicMessageSchema } from './anthropic-wire-schemas.js';
import { convertAnthropicStream } from './convert-anthropic-stream.js';
import { convertFromAnthropicResponse } from './convert-from-anthropic-response.js';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.js';

interface AnthropicProviderOptions {
  /** Epoch milliseconds; gives `created` and the base of `Retry-After` dates. Defaults to `Date.now`. */
  now?: () => number;
}

/**
 * The Anthropic Messages API adapter: chat (POSTs `${baseUrl}/messages` and translates both ways)
 * and `messages`, the Messages API passed through for the Anthropic wire skin (`anthropic-messages.ts`).
 *
 * Failures: a non-2xx answer → `UpstreamError('http', <Anthropic's message>, status, retryAfterMs)`;
 * the HTTP client throwing → `UpstreamError('network')`, except when `signal` aborted, where the
 * abort error is rethrown as is. A 2xx body that is not a Messages response →
 * `UpstreamError('http', …, 502)` (see `readUpstreamJson`). A stream that breaks while being read →
 * `UpstreamError('network')`.
 */
export function createAnthropicProvider(
  http: HttpClient,
  options: AnthropicProviderOptions = {},
): Required<Pick<ProviderAdapter, 'chat' | 'messages'>> {
  const now = options.now ?? Date.now;
  const channel: UpstreamChannel = { http, dialect: anthropicDialect, now };

  const post = (request: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamPost => ({
    provider: target.provider,
    url: `${target.provider.baseUrl}/messages`,
    headers: anthropicHeaders(target.provider),
    body: convertToAnthropicRequest({ ...request, stream }, target),
  });

  const chat: ChatCapability = {
    async complete(request, target, call) {
      const answer = await postUpstreamJson(
        channel,
        post(request, target, false),
        anthropicMessageSchema,
        call,
      );
      return convertFromAnthropicResponse(answer.data, now());
    },

    async stream(request, target, call) {
      const response = await sendUpstream(channel, post(request, target, true), call);
      const body = guardedBody(
        response,
        call.signal,
        (error) => new UpstreamError('network', `anthropic: the stream broke (${describeError(error)})`),
      );
      return convertAnthropicStream(body, now());
    },
  };
  return { chat, messages: anthropicMessages(channel) };
}
