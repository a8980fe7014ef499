import { z } from 'zod';
import { bearerPost } from '../bearer-post.js';
import type { TokenUsage } from '../chat-types.js';
import { guardedBody } from '../guarded-body.js';
import type { ResponsesCapability, UpstreamTarget } from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { sendUpstream, type UpstreamChannel } from '../send-upstream.js';
import { networkFailure } from '../upstream-error.js';
import { upstreamBody } from './build-openai-request.js';
import { convertResponsesStream, convertResponsesUsage } from './convert-responses-stream.js';
import { describeError } from './openai-dialect.js';

/** A Response as far as the gateway reads it; every other field passes through. */
const responseSchema = z.looseObject({ output: z.array(z.unknown()), usage: z.unknown().optional() });

/**
 * The Responses API of an upstream that serves it itself (`POST {baseUrl}/responses`): the caller's
 * body goes up as `buildResponsesRequest` says, the JSON answer comes back as received with its
 * usage read, and a stream comes back event by event (`convertResponsesStream`), read through
 * `guardedBody` so breaking off throws `UpstreamError('network')`.
 */
export function openAIResponses(channel: UpstreamChannel): ResponsesCapability {
  const post = (request: Record<string, unknown>, target: UpstreamTarget, stream: boolean) =>
    bearerPost(target.provider, '/responses', buildResponsesRequest(request, target, { stream }));
  return {
    async create(request, target, call) {
      const answer = await postUpstreamJson(channel, post(request, target, false), responseSchema, call);
      return {
        response: answer.json as Record<string, unknown>,
        usage: convertResponsesUsage(answer.data.usage),
      };
    },

    async stream(request, target, call) {
      const response = await sendUpstream(channel, post(request, target, true), call);
      let usage: TokenUsage | null = null;
      const body = guardedBody(response, call.signal, (error) =>
        networkFailure(error, call.signal, `the upstream stream broke off: ${describeError(error)}`),
      );
      const chunks = convertResponsesStream(body, (reported) => {
        usage = reported;
      });
      return { chunks, usage: () => usage };
    },
  };
}

/**
 * The body sent to a native Responses upstream (product.md "Upstream"): the caller's Responses body
 * with `model` set to the upstream's name and the gateway's own fields removed, `metadata`
 * forwarded, `store: false` (the gateway keeps no state, so neither may the upstream on its
 * behalf), and — when it names no `max_output_tokens` — the ceiling it was held against, so the
 * upstream cannot generate past the hold. `stream` follows the call, not the caller.
 */
export function buildResponsesRequest(
  request: Record<string, unknown>,
  target: UpstreamTarget,
  mode: { stream: boolean },
): Record<string, unknown> {
  const body = upstreamBody(request, target);
  if (request.metadata != null) body.metadata = request.metadata;
  body.store = false;
  if (typeof body.max_output_tokens !== 'number' && target.maxOutputTokens > 0) {
    body.max_output_tokens = target.maxOutputTokens;
  }
  if (mode.stream) {
    body.stream = true;
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}
