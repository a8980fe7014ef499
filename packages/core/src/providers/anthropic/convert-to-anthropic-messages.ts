import type { ChatMessage, ChatToolCall } from '../chat-types.js';
import { UpstreamError } from '../upstream-error.js';
import {
  type AnthropicCacheControl,
  type AnthropicImageBlock,
  type AnthropicRequest,
  type AnthropicRequestBlock,
  type AnthropicRequestMessage,
  type AnthropicTextBlock,
  type AnthropicToolResultBlock,
  anthropicCacheControlSchema,
} from './anthropic-request-schema.js';

interface AnthropicPrompt {
  system: AnthropicRequest['system'];
  messages: AnthropicRequestMessage[];
}

type Role = AnthropicRequestMessage['role'];

/**
 * OpenAI chat messages → Anthropic's top-level `system` plus alternating user/assistant messages.
 * System and developer messages are hoisted in order; consecutive `tool` messages become one user
 * message of `tool_result` blocks; consecutive same-role turns are merged, since Anthropic requires
 * alternation. Empty text is dropped (Anthropic refuses empty text blocks). A part Anthropic cannot
 * take throws `UpstreamError('http', …, 400)`, the same failure the provider itself would give.
 */
export function convertToAnthropicMessages(messages: readonly ChatMessage[]): AnthropicPrompt {
  const system: AnthropicTextBlock[] = [];
  const turns: { role: Role; blocks: AnthropicRequestBlock[] }[] = [];
  const push = (role: Role, blocks: AnthropicRequestBlock[]) => {
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  };

  for (const message of messages) {
    const role = message.role;
    switch (role) {
      case 'system':
      case 'developer':
        system.push(...textOnlyBlocks(message.content, role));
        break;
      case 'user':
        push('user', userBlocks(message.content));
        break;
      case 'assistant':
        push('assistant', [...assistantTextBlocks(message.content), ...toolUseBlocks(message.tool_calls)]);
        break;
      case 'tool':
        push('user', [toolResultBlock(message)]);
        break;
      default: {
        const unknownRole: never = role;
        throw unsupported(`message role "${String(unknownRole)}" is not supported`);
      }
    }
  }

  return {
    system: collapseSystem(system),
    messages: turns.map(({ role, blocks }) => ({ role, content: collapseBlocks(blocks) })),
  };
}

/** One plain text block reads better (and caches the same) as a bare string. */
function collapseBlocks(blocks: AnthropicRequestBlock[]): AnthropicRequestMessage['content'] {
  const only = blocks[0];
  if (blocks.length === 1 && only?.type === 'text' && !only.cache_control) return only.text;
  return blocks;
}

function collapseSystem(blocks: AnthropicTextBlock[]): AnthropicRequest['system'] {
  if (blocks.length === 0) return undefined;
  const only = blocks[0];
  if (blocks.length === 1 && only && !only.cache_control) return only.text;
  return blocks;
}

type Content = ChatMessage['content'];
type Part = Record<string, unknown> & { type?: unknown };

function partsOf(content: Content): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content)) return content as Part[];
  return [];
}

function textBlock(text: unknown, part: Part): AnthropicTextBlock[] {
  if (typeof text !== 'string') throw unsupported('a text content part has no text');
  if (text === '') return [];
  const cacheControl = cacheControlOf(part);
  return [cacheControl ? { type: 'text', text, cache_control: cacheControl } : { type: 'text', text }];
}

/** Carries an OpenRouter-style `cache_control` on a part through, when it has Anthropic's shape. */
function cacheControlOf(part: Part): AnthropicCacheControl | undefined {
  if (part.cache_control === undefined) return undefined;
  const parsed = anthropicCacheControlSchema.safeParse(part.cache_control);
  return parsed.success ? parsed.data : undefined;
}

function textOnlyBlocks(content: Content, role: string): AnthropicTextBlock[] {
  return partsOf(content).flatMap((part) => {
    if (part.type === 'text') return textBlock(part.text, part);
    throw unsupported(`content part type "${String(part.type)}" is not supported in a ${role} message`);
  });
}

function userBlocks(content: Content): (AnthropicTextBlock | AnthropicImageBlock)[] {
  return partsOf(content).flatMap((part): (AnthropicTextBlock | AnthropicImageBlock)[] => {
    if (part.type === 'text') return textBlock(part.text, part);
    if (part.type === 'image_url') return [imageBlock(part)];
    throw unsupported(`content part type "${String(part.type)}" is not supported`);
  });
}

function assistantTextBlocks(content: Content): AnthropicTextBlock[] {
  return partsOf(content).flatMap((part) => {
    if (part.type === 'text') return textBlock(part.text, part);
    if (part.type === 'refusal') return textBlock(part.refusal, part);
    throw unsupported(`content part type "${String(part.type)}" is not supported in an assistant message`);
  });
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function imageBlock(part: Part): AnthropicImageBlock {
  const imageUrl = part.image_url as { url?: unknown } | undefined;
  const url = typeof imageUrl?.url === 'string' ? imageUrl.url : '';
  const dataUrl = DATA_URL.exec(url);
  const cacheControl = cacheControlOf(part);
  const extra = cacheControl ? { cache_control: cacheControl } : {};
  if (dataUrl) {
    return {
      type: 'image',
      source: { type: 'base64', media_type: dataUrl[1]!, data: dataUrl[2]! },
      ...extra,
    };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url }, ...extra };
  throw unsupported('image_url must be a base64 data: URL or an http(s) URL');
}

function toolUseBlocks(toolCalls: ChatToolCall[] | undefined): AnthropicRequestBlock[] {
  return (toolCalls ?? []).map((call) => ({
    type: 'tool_use',
    id: call.id,
    name: call.function.name,
    input: parseArguments(call.function.arguments),
  }));
}

/**
 * Tool-call arguments as Anthropic's `input`, which must be an object: arguments that are not a
 * JSON object (cut off by a token limit, or empty for a call without parameters) become `{}`.
 */
export function parseArguments(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // fall through
  }
  return {};
}

function toolResultBlock(message: ChatMessage): AnthropicToolResultBlock {
  if (typeof message.tool_call_id !== 'string') throw unsupported('a tool message has no tool_call_id');
  const block: AnthropicToolResultBlock = { type: 'tool_result', tool_use_id: message.tool_call_id };
  if (typeof message.content === 'string') {
    if (message.content !== '') block.content = message.content;
  } else {
    const blocks = textOnlyBlocks(message.content, 'tool');
    if (blocks.length > 0) block.content = blocks;
  }
  return block;
}

function unsupported(message: string): UpstreamError {
  return new UpstreamError('http', `anthropic: ${message}`, 400);
}
