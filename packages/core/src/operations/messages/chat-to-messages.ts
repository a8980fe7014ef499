import { parseArguments } from '../../providers/anthropic/convert-to-anthropic-messages.js';
import type { ChatCompletion, TokenUsage } from '../../providers/chat-types.js';

/** Anthropic's stop reasons the translation can give. */
type MessagesStopReason = 'end_turn' | 'max_tokens' | 'tool_use' | 'stop_sequence' | 'refusal';

// A `Record` over OpenAI's documented reasons: each has its Anthropic counterpart.
const STOP_REASONS: Record<string, MessagesStopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'refusal',
};

/** A chat `finish_reason` → Anthropic's `stop_reason`; a missing or unknown one ends the turn. */
export function messagesStopReason(finishReason: string | null | undefined): MessagesStopReason {
  return (finishReason != null && STOP_REASONS[finishReason]) || 'end_turn';
}

/** Anthropic's `usage` object for the gateway's counts (product.md): input excludes the cached part. */
export function messagesUsage(usage: TokenUsage) {
  return {
    input_tokens: Math.max(0, usage.promptTokens - usage.cachedTokens - usage.cacheWriteTokens),
    output_tokens: usage.completionTokens,
    cache_creation_input_tokens: usage.cacheWriteTokens,
    cache_read_input_tokens: usage.cachedTokens,
  };
}

/** The Messages id of the gateway's answer to request `requestId` (`req_…` → `msg_…`). */
export function messageIdOf(requestId: string): string {
  return `msg_${requestId.slice(requestId.indexOf('_') + 1)}`;
}

/** A Messages content block the translation writes. */
type TranslatedBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/**
 * A chat completion → an Anthropic Messages answer (product.md): its first choice's text as one
 * `text` block (none when empty) and its tool calls as `tool_use` blocks with the upstream's call id,
 * arguments parsed back into `input`; `stop_reason` mapped; `usage` from the meter's counts.
 * Reasoning text has no place a Messages client would accept without a signature, so it is left out.
 */
export function completionToMessage(
  completion: ChatCompletion,
  usage: TokenUsage,
  ids: { id: string; model: string },
) {
  const choice = completion.choices[0];
  const content: TranslatedBlock[] = [];
  const text = choice?.message.content;
  if (typeof text === 'string' && text !== '') content.push({ type: 'text', text });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseArguments(call.function.arguments),
    });
  }
  return {
    id: ids.id,
    type: 'message' as const,
    role: 'assistant' as const,
    model: ids.model,
    content,
    stop_reason: messagesStopReason(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(usage),
  };
}
