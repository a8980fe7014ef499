import { estimateTokens, priceWorstCase } from '../../metering/estimate-worst-case.js';
import { estimatedUsage, meteredUsage } from '../../metering/usage.js';
import type { InferenceOperation, StreamingOperation } from '../../pipeline/inference-operation.js';
import { convertToAnthropicMessages } from '../../providers/anthropic/convert-to-anthropic-messages.js';
import { mapAnthropicStopReason } from '../../providers/anthropic/map-anthropic-stop-reason.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ChatRequest,
} from '../../providers/chat-types.js';
import {
  type CompletionResult,
  GATEWAY_FIELDS,
  type MessagesPassThrough,
  type PassedThroughMessage,
  type UpstreamTarget,
} from '../../providers/provider-adapter.js';
import { UpstreamError } from '../../providers/upstream-error.js';
import { chatOperation } from '../chat/chat-operation.js';
import { chunksAsCompletion } from '../chat/chat-replay.js';
import { chatWorstCase } from '../chat/chat-worst-case.js';
import { completionToMessage, messageIdOf } from './chat-to-messages.js';
import { eventsAsMessage, messageAsEvents } from './messages-replay.js';
import type { MessagesRequest } from './messages-request-schema.js';
import { type MessagesChunk, messagesStreamWriter } from './messages-stream-writer.js';
import type { TranslatedRequest } from './messages-to-chat.js';

/** One Messages request as it entered: the caller's body, its chat translation, its Anthropic headers. */
interface MessagesEntry {
  wire: MessagesRequest;
  translated: TranslatedRequest;
  version: string | null;
  beta: string | null;
}

/** What one attempt answered: Anthropic's own message (passed through) or a chat completion (translated). */
type MessagesAnswer = { native: PassedThroughMessage } | { translated: CompletionResult };

/** The record's `endpoint`, the caller's path and the span's operation of every Messages request. */
export const MESSAGES_ENDPOINT = {
  endpoint: 'messages',
  path: '/v1/messages',
  spanOperation: 'chat',
} as const;

/** The gateway's own fields, never sent upstream; `metadata` is Anthropic's too and passes through. */
const GATEWAY_ONLY = GATEWAY_FIELDS.filter((field) => field !== 'metadata');

/**
 * `POST /v1/messages` for one request, as a metered operation over its chat translation: the
 * pipeline runs on the chat body (guardrails, middle-out, the cache key, the web plugin, the hold on
 * `max_tokens`), and each attempt picks its wire by route. An Anthropic route gets the caller's own
 * body and headers passed through (`adapter.messages`) and its answer or events handed back as
 * they are; any other route gets the chat call, its answer written back as a Messages answer.
 */
export function messagesOperation(entry: MessagesEntry): InferenceOperation<ChatRequest, MessagesAnswer> {
  const { translated } = entry;
  // The prompt's pre-flight estimate (message_start's input_tokens on a translated stream), and the
  // answer's id once a stream named it (for the cached copy).
  let promptTokens = 0;
  let answerId: string | null = null;

  const passThrough = (body: ChatRequest): MessagesPassThrough => ({
    body: passThroughBody(entry, body),
    version: entry.version,
    beta: entry.beta,
  });
  const chatBody = (body: ChatRequest, target: UpstreamTarget): ChatRequest => {
    if (translated.untranslatable.length > 0) {
      throw new UpstreamError(
        'http',
        `${target.provider.id} takes chat completions, which cannot carry ${translated.untranslatable.join(', ')}`,
        400,
      );
    }
    return upstreamChatBody(body, target, translated.cacheMarkers);
  };

  const stream: StreamingOperation<ChatRequest, MessagesChunk> = {
    open: async (adapter, body, target, options) =>
      adapter.messages
        ? adapter.messages.stream(passThrough(body), target, options)
        : adapter.chat!.stream(chatBody(body, target), target, options),
    writer(served) {
      answerId = messageIdOf(served.requestId);
      return messagesStreamWriter(served.requestId, {
        id: answerId,
        model: served.model,
        inputTokens: promptTokens,
      });
    },
    replay: (answer) => messageAsEvents(answer),
    assemble(chunks, servedModel, usage) {
      const first = chunks[0] as ChatCompletionChunk | undefined;
      if (!Array.isArray(first?.choices))
        return eventsAsMessage(chunks as Parameters<typeof eventsAsMessage>[0]);
      const completion = chunksAsCompletion(chunks as ChatCompletionChunk[], servedModel, usage);
      return completionToMessage(completion as unknown as ChatCompletion, usage, {
        id: answerId ?? messageIdOf(''),
        model: servedModel,
      });
    },
  };

  return {
    ...chatOperation,
    ...MESSAGES_ENDPOINT,
    worstCase(body, routes) {
      const chat = chatWorstCase(body, routes);
      const dropped = droppedTokens(translated);
      promptTokens = chat.usage.promptTokens + dropped;
      if (dropped === 0) return chat;
      const usage = { ...chat.usage, promptTokens };
      return priceWorstCase(
        usage,
        routes.map((route) => route.endpoint.pricing),
      );
    },
    async call(adapter, body, target, options) {
      if (adapter.messages)
        return { native: await adapter.messages.complete(passThrough(body), target, options) };
      return { translated: await adapter.chat!.complete(chatBody(body, target), target, options) };
    },
    meter(answer, body, worstCase) {
      if ('translated' in answer) return chatOperation.meter(answer.translated, body, worstCase);
      const { json, usage, message } = answer.native;
      const { chars, produced } = outputOf(json.content);
      return {
        usage: usage ? meteredUsage(usage) : estimatedUsage(worstCase.usage, null, chars),
        producedOutput: produced,
        finishReason: mapAnthropicStopReason(message.stop_reason),
      };
    },
    respond(answer, _body, served, metered) {
      if ('native' in answer) return answer.native.json;
      return completionToMessage(answer.translated.completion, metered.usage, {
        id: messageIdOf(served.requestId),
        model: served.model,
      });
    },
    stream: stream as StreamingOperation<ChatRequest, unknown>,
  };
}

/** Prompt tokens of what the chat translation leaves out (thinking blocks, server tools): still sent when passed through. */
export function droppedTokens(translated: TranslatedRequest): number {
  return translated.dropped.length > 0 ? estimateTokens(JSON.stringify(translated.dropped)) : 0;
}

/** A Messages body without the gateway's own fields (`models`, `provider`, `preset`, …); `metadata` stays. */
export function withoutGatewayFields(wire: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...wire };
  for (const field of GATEWAY_ONLY) delete out[field];
  return out;
}

/**
 * The body an Anthropic route gets: the caller's, without the gateway's own fields. When the
 * pipeline rewrote the conversation (middle-out dropped turns, the web plugin added its results),
 * `system` and `messages` are the rewritten ones, converted back (blocks the chat form has no room
 * for, such as thinking, are then not in them).
 */
function passThroughBody(entry: MessagesEntry, body: ChatRequest): Record<string, unknown> {
  const out = withoutGatewayFields(entry.wire);
  if (body.messages === entry.translated.chat.messages) return out;
  const { system, messages } = convertToAnthropicMessages(body.messages);
  out.messages = messages;
  if (system === undefined) delete out.system;
  else out.system = system;
  return out;
}

/**
 * The chat body a translated route gets: `cache_control` taken off its parts (Anthropic's marker,
 * which an OpenAI-format upstream may refuse), and the output ceiling in the field the provider
 * takes (`max_tokens_field`).
 */
function upstreamChatBody(body: ChatRequest, target: UpstreamTarget, cacheMarkers: boolean): ChatRequest {
  let out = body;
  if (cacheMarkers) out = { ...out, messages: out.messages.map(withoutCacheMarkers) };
  if (target.provider.maxTokensField === 'max_completion_tokens' && out.max_tokens !== undefined) {
    const { max_tokens, ...rest } = out;
    out = { ...rest, max_completion_tokens: max_tokens };
  }
  return out;
}

function withoutCacheMarkers(message: ChatMessage): ChatMessage {
  if (!Array.isArray(message.content) || !message.content.some((part) => 'cache_control' in part))
    return message;
  return { ...message, content: message.content.map(({ cache_control: _marker, ...part }) => part) };
}

/** Characters of output in a Messages answer's content, and whether it has any (text, tool calls, thinking). */
function outputOf(content: unknown): { chars: number; produced: boolean } {
  let chars = 0;
  let produced = false;
  for (const block of Array.isArray(content) ? (content as Record<string, unknown>[]) : []) {
    const text =
      block.text ?? block.thinking ?? (block.input === undefined ? undefined : JSON.stringify(block.input));
    if (typeof text === 'string') chars += text.length;
    if ((typeof block.text === 'string' && block.text !== '') || block.type === 'tool_use') produced = true;
  }
  return { chars, produced };
}
