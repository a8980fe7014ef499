import type { ChatCompletion, ChatToolCall } from '../chat-types.js';
import type { CompletionResult } from '../provider-adapter.js';
import type { AnthropicMessage } from './anthropic-wire-schemas.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';
import { toChatUsage, toTokenUsage } from './map-anthropic-usage.js';

/**
 * A Messages response → an OpenAI chat completion and the gateway's token counts. Text blocks are
 * joined (content is `null` when there is none); `tool_use` blocks become `tool_calls` keeping the
 * Anthropic id, so a later `tool_result` points back at it. Blocks with no chat-completions
 * equivalent (thinking, server tools) are left out. `nowMs` (epoch ms) gives `created`.
 */
export function convertFromAnthropicResponse(message: AnthropicMessage, nowMs: number): CompletionResult {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  for (const block of message.content) {
    switch (block.type) {
      case 'text':
        texts.push(block.text);
        break;
      case 'tool_use':
        toolCalls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: stringifyInput(block.input) },
        });
        break;
      case 'other':
        break;
      default: {
        const unknownBlock: never = block;
        throw new Error(`unhandled block ${JSON.stringify(unknownBlock)}`);
      }
    }
  }

  const usage = message.usage ? toTokenUsage(message.usage) : null;
  const completion: ChatCompletion = {
    id: message.id,
    object: 'chat.completion',
    created: Math.floor(nowMs / 1000),
    model: message.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: texts.length > 0 ? texts.join('') : null,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: mapAnthropicStopReason(message.stop_reason),
      },
    ],
  };
  if (usage) completion.usage = toChatUsage(usage);
  return { completion, usage };
}

/** `input` as a JSON string; a missing input is `"{}"`, which is what a no-argument call means. */
function stringifyInput(input: unknown): string {
  return input === undefined || input === null ? '{}' : JSON.stringify(input);
}
