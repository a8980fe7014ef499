import type { EventSourceMessage } from 'eventsource-parser';
import { z } from 'zod';
import { guardedBody } from '../guarded-body.js';
import type {
  AnthropicEvent,
  AnthropicEventStream,
  MessagesCapability,
  MessagesPassThrough,
  UpstreamTarget,
} from '../provider-adapter.js';
import { postUpstreamJson } from '../read-upstream-json.js';
import { sendUpstream, type UpstreamChannel, type UpstreamPost } from '../send-upstream.js';
import { type SseConverter, sseChunks } from '../sse-chunks.js';
import { UpstreamError } from '../upstream-error.js';
import { describeError } from './anthropic-dialect.js';
import { anthropicHeaders } from './anthropic-headers.js';
import { type AnthropicUsage, anthropicMessageSchema } from './anthropic-wire-schemas.js';
import { eventJson } from './convert-anthropic-stream.js';
import { mergeAnthropicUsage, toTokenUsage } from './map-anthropic-usage.js';

const countTokensSchema = z.looseObject({ input_tokens: z.number() });

/**
 * The Anthropic adapter's pass-through member. Failures are the adapter's own (`sendUpstream`): a
 * non-2xx is `UpstreamError('http', <Anthropic's message>, status)`; on a stream, an `error` event
 * before `message_start` is one too (with the status its type stands for, so an `overloaded_error`
 * is retried like a 529), and after it the event is handed on as it is and the stream then breaks.
 */
export function anthropicMessages(channel: UpstreamChannel): MessagesCapability {
  const post = (request: MessagesPassThrough, target: UpstreamTarget, path: string, body: unknown) => {
    const headers = anthropicHeaders(target.provider);
    if (request.version !== null) headers['anthropic-version'] = request.version;
    if (request.beta !== null) headers['anthropic-beta'] = request.beta;
    return {
      provider: target.provider,
      url: `${target.provider.baseUrl}${path}`,
      headers,
      body,
    } as UpstreamPost;
  };
  const withModel = (request: MessagesPassThrough, target: UpstreamTarget) => ({
    ...request.body,
    model: target.upstreamModel,
  });
  return {
    async complete(request, target, call) {
      const answer = await postUpstreamJson(
        channel,
        post(request, target, '/messages', withModel(request, target)),
        anthropicMessageSchema,
        call,
      );
      const usage = answer.data.usage ? toTokenUsage(answer.data.usage) : null;
      return { json: answer.json as Record<string, unknown>, message: answer.data, usage };
    },

    async stream(request, target, call) {
      const response = await sendUpstream(
        channel,
        post(request, target, '/messages', withModel(request, target)),
        call,
      );
      const body = guardedBody(
        response,
        call.signal,
        (error) => new UpstreamError('network', `anthropic: the stream broke (${describeError(error)})`),
      );
      return passThroughStream(body);
    },

    async countTokens(request, target, call) {
      // count_tokens takes the Messages body without these two.
      const {
        max_tokens: _max,
        stream: _stream,
        ...body
      } = withModel(request, target) as Record<string, unknown>;
      const answer = await postUpstreamJson(
        channel,
        post(request, target, '/messages/count_tokens', body),
        countTokensSchema,
        call,
      );
      return answer.data.input_tokens;
    },
  };
}

/** The SSE text each passed-through event arrived as (rebuilt from its fields, which are kept as sent). */
const sseTextOf = new WeakMap<AnthropicEvent, string>();

/** The SSE text `event` arrived as, when it came from upstream (`undefined` for an event made here). */
export function receivedSseText(event: AnthropicEvent): string | undefined {
  return sseTextOf.get(event);
}

/**
 * A Messages stream's events as they arrive, each kept with its SSE text so it is handed on as sent
 * (`receivedSseText`); the usage of `message_start` and `message_delta` merged as it comes. Ends
 * after `message_stop`; iterating throws `UpstreamError` on an `error` event (after handing it on
 * when it came after `message_start`), on data that is not a JSON event, and when the events end
 * before `message_stop`.
 */
export function passThroughStream(bytes: AsyncIterable<Uint8Array>): AnthropicEventStream {
  let usage: AnthropicUsage | null = null;
  let started = false;
  let stopped = false;
  const converter: SseConverter<AnthropicEvent> = {
    event(message, emit) {
      const event = parseEvent(message.data);
      if (event.type === 'error') {
        const { type, text } = errorOf(event);
        // Before any output the walk may still retry or fail over: an error, not an event.
        if (!started)
          throw new UpstreamError('http', `anthropic: ${text}`, STATUS_OF_ERROR_TYPE[type] ?? 500);
        sseTextOf.set(event, sseText(message));
        emit(event);
        throw new UpstreamError('network', `anthropic: ${text}`);
      }
      if (event.type === 'message_start') {
        started = true;
        usage = mergeAnthropicUsage(usage, (event.message as { usage?: AnthropicUsage } | undefined)?.usage);
      } else if (event.type === 'message_delta') {
        usage = mergeAnthropicUsage(usage, event.usage as AnthropicUsage | undefined);
      }
      sseTextOf.set(event, sseText(message));
      emit(event);
      stopped = event.type === 'message_stop';
      return stopped;
    },
    end() {
      if (!stopped) throw new UpstreamError('network', 'anthropic: stream ended before message_stop');
    },
  };
  return { chunks: sseChunks(bytes, converter), usage: () => (usage ? toTokenUsage(usage) : null) };
}

/** Anthropic's error types, as the HTTP status each stands for (its API docs). */
const STATUS_OF_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

function parseEvent(data: string): AnthropicEvent {
  const json = eventJson(data);
  if (typeof json !== 'object' || json === null || typeof (json as { type?: unknown }).type !== 'string') {
    throw new UpstreamError('network', 'anthropic: a stream event has no type');
  }
  return json as AnthropicEvent;
}

function errorOf(event: AnthropicEvent): { type: string; text: string } {
  const error = (event.error ?? {}) as { type?: unknown; message?: unknown };
  return {
    type: typeof error.type === 'string' ? error.type : 'api_error',
    text:
      typeof error.message === 'string' && error.message !== '' ? error.message : 'the stream sent an error',
  };
}

/** An event as SSE text: its `event:` name and its data, line for line as it came. */
function sseText(message: EventSourceMessage): string {
  const name = message.event === undefined ? '' : `event: ${message.event}\n`;
  return `${name}${message.data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('')}\n`;
}
