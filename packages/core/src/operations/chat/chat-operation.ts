import { estimatedUsage, meteredUsage } from '../../metering/usage.js';
import type { InferenceOperation, StreamingOperation } from '../../pipeline/inference-operation.js';
import type { ChatCompletionChunk, ChatRequest } from '../../providers/chat-types.js';
import type { CompletionResult } from '../../providers/provider-adapter.js';
import type { PlannedRoute } from '../../routing/walk-routes.js';
import { chunksAsCompletion, completionAsChunks } from './chat-replay.js';
import { chatStreamWriter } from './chat-stream-writer.js';
import { chatUsage, outputCharacters } from './chat-usage.js';
import { chatWorstCase } from './chat-worst-case.js';
import { countAttachments, largestAttachment } from './count-attachments.js';
import { middleOut } from './middle-out.js';

/** The streaming half of chat: OpenAI chunks in, OpenAI chunks out, a terminal chunk with usage. */
const chatStream: StreamingOperation<ChatRequest, ChatCompletionChunk> = {
  open: (adapter, body, target, options) => adapter.chat!.stream(body, target, options),
  writer: chatStreamWriter,
  replay: completionAsChunks,
  assemble: chunksAsCompletion,
};

/** `POST /v1/chat/completions` as a metered operation. */
export const chatOperation: InferenceOperation<ChatRequest, CompletionResult> = {
  endpoint: 'chat.completions',
  path: '/v1/chat/completions',
  spanOperation: 'chat',
  modelType: 'chat',
  capability: 'chat',
  idempotent: true,
  streams: (body) => body.stream === true,
  usesTools: (body) => Array.isArray(body.tools) && body.tools.length > 0,
  attachments: (body) => ({
    counts: countAttachments(body.messages),
    largestBytes: largestAttachment(body.messages),
  }),
  transform: applyMiddleOut,
  cacheable: true,
  webPlugin: true,
  worstCase: chatWorstCase,
  call: (adapter, body, target, options) => adapter.chat!.complete(body, target, options),
  meter({ completion, usage }, _body, worstCase) {
    const choice = completion.choices[0];
    const message = choice?.message;
    const producedOutput =
      (typeof message?.content === 'string' && message.content.length > 0) ||
      (message?.tool_calls?.length ?? 0) > 0;
    const delivered = completion.choices.reduce((n, c) => n + outputCharacters(c.message), 0);
    return {
      usage: usage ? meteredUsage(usage) : estimatedUsage(worstCase.usage, null, delivered),
      producedOutput,
      finishReason: choice?.finish_reason ?? null,
    };
  },
  respond: ({ completion }, _body, served, metered) => ({
    ...completion,
    model: served.model,
    usage: completion.usage ?? chatUsage(metered.usage),
  }),
  stream: chatStream as StreamingOperation<ChatRequest, unknown>,
};

/**
 * `transforms: ["middle-out"]` (product.md): fits the conversation into the context of the model it
 * is planned for, dropping whole messages from the middle outward. Other transforms are ignored.
 */
function applyMiddleOut(body: ChatRequest, route: PlannedRoute) {
  if (!Array.isArray(body.transforms) || !body.transforms.includes('middle-out')) return null;
  const contextLength = route.model.contextLength;
  const asked = body.max_tokens ?? body.max_completion_tokens;
  const maxTokens = typeof asked === 'number' ? asked : null;
  const { messages, droppedMessages } =
    contextLength === null
      ? { messages: body.messages, droppedMessages: 0 }
      : middleOut(body.messages, { contextLength, maxTokens });
  return {
    body: droppedMessages > 0 ? { ...body, messages } : body,
    transforms: [{ id: 'middle-out', dropped_messages: droppedMessages }],
  };
}
