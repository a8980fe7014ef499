import type {
  ChatContentPart,
  ChatMessage,
  ChatRequest,
  ChatTool,
  ChatToolCall,
  ChatToolChoice,
} from '../../providers/chat-types.js';
import { GATEWAY_FIELDS } from '../../providers/provider-adapter.js';
import type { MessagesBlock, MessagesRequest } from './messages-request-schema.js';

/** A Messages request as the chat request the pipeline runs on, and what a chat call cannot carry. */
export interface TranslatedRequest {
  chat: ChatRequest;
  /**
   * What has no chat-completions equivalent (a `document` block, a tool choice naming a server
   * tool): a translated route refuses the request naming these; an Anthropic route passes them on.
   */
  untranslatable: string[];
  /** Whether a text or image part carries `cache_control` (kept for the pipeline, not sent to OpenAI). */
  cacheMarkers: boolean;
  /** What the chat body leaves out (thinking blocks, server tools…), for the prompt's estimate. */
  dropped: unknown[];
}

type Json = Record<string, unknown>;

/**
 * A Messages request → a chat-completions request (product.md, "Other routes are translated"): the
 * `system` prompt becomes a leading system message; `text` and `image` blocks (base64 and url
 * sources) content parts; an assistant's `tool_use` blocks its `tool_calls` (ids kept, input as a
 * JSON string); a `system` turn (Claude Code sends them mid-conversation) a system message; a
 * user's `tool_result` blocks `tool` messages, put before the rest of that turn
 * (chat wants them right after the calls); `tools` with an `input_schema` function tools (server
 * tools, which have none, are left out); `tool_choice` `auto`/`any`/`tool`/`none` →
 * `auto`/`required`/the function/`none`; `max_tokens`, `temperature`, `top_p`, `stop_sequences` →
 * `stop`, `stream`, and the gateway's own fields as they are, but `metadata`, which on this wire is
 * Anthropic's (`user_id`), not the gateway's labels: it reaches an Anthropic route only. `thinking`
 * blocks and the `thinking` option are dropped; `cache_control` rides on its part (OpenRouter's
 * convention). Pure; nested values are shared, not copied.
 */
export function messagesToChat(wire: MessagesRequest): TranslatedRequest {
  const state: TranslatedRequest = {
    chat: { model: wire.model, messages: [] },
    untranslatable: [],
    cacheMarkers: false,
    dropped: [],
  };
  const { chat } = state;
  // `metadata` is Anthropic's here (Claude Code's `user_id`), not the gateway's labels.
  for (const field of GATEWAY_FIELDS) {
    if (field !== 'metadata' && wire[field] !== undefined) chat[field] = wire[field];
  }
  if (wire.system !== undefined) {
    systemTurn(typeof wire.system === 'string' ? [{ type: 'text', text: wire.system }] : wire.system, state);
  }
  for (const message of wire.messages) {
    const blocks: MessagesBlock[] =
      typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'user') userTurn(blocks, state);
    else if (message.role === 'assistant') assistantTurn(blocks, state);
    else systemTurn(blocks, state);
  }
  if (typeof wire.max_tokens === 'number') chat.max_tokens = wire.max_tokens;
  if (wire.stream === true) chat.stream = true;
  if (typeof wire.temperature === 'number') chat.temperature = wire.temperature;
  if (typeof wire.top_p === 'number') chat.top_p = wire.top_p;
  if (wire.stop_sequences && wire.stop_sequences.length > 0) chat.stop = wire.stop_sequences;
  const tools = (wire.tools ?? []).flatMap((tool) => functionTool(tool, state));
  if (tools.length > 0) {
    chat.tools = tools;
    const choice = toolChoice(wire.tool_choice, tools, state);
    if (choice !== undefined) chat.tool_choice = choice;
    if (
      (wire.tool_choice as { disable_parallel_tool_use?: unknown } | undefined)?.disable_parallel_tool_use ===
      true
    )
      chat.parallel_tool_calls = false;
  } else if (wire.tool_choice?.type === 'tool') {
    state.untranslatable.push(`a tool_choice naming the tool "${String(wire.tool_choice.name)}"`);
  }
  return state;
}

/** The system prompt, or a system turn of the conversation: a system message of its text. */
function systemTurn(blocks: readonly MessagesBlock[], state: TranslatedRequest): void {
  const parts = contentParts(blocks, state, 'system');
  if (parts.length > 0) state.chat.messages.push({ role: 'system', content: collapse(parts) });
}

/** A user turn: its tool results as `tool` messages, then one user message with the other parts. */
function userTurn(blocks: readonly MessagesBlock[], state: TranslatedRequest): void {
  const parts: ChatContentPart[] = [];
  const results: ChatMessage[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') {
      const { text, images } = toolResultContent(block.content, state);
      results.push({ role: 'tool', tool_call_id: String(block.tool_use_id), content: text });
      parts.push(...images);
    } else {
      parts.push(...contentParts([block], state, 'user'));
    }
  }
  state.chat.messages.push(...results);
  if (parts.length > 0) state.chat.messages.push({ role: 'user', content: collapse(parts) });
}

/** An assistant turn: its text, and its `tool_use` blocks as tool calls; thinking is dropped. */
function assistantTurn(blocks: readonly MessagesBlock[], state: TranslatedRequest): void {
  const parts: ChatContentPart[] = [];
  const calls: ChatToolCall[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_use') {
      calls.push({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
    } else if (block.type === 'thinking' || block.type === 'redacted_thinking') {
      state.dropped.push(block);
    } else {
      parts.push(...contentParts([block], state, 'assistant'));
    }
  }
  const message: ChatMessage = { role: 'assistant', content: parts.length > 0 ? collapse(parts) : null };
  if (calls.length > 0) message.tool_calls = calls;
  if (parts.length > 0 || calls.length > 0) state.chat.messages.push(message);
}

/** Text and image blocks as chat content parts; anything else is noted as untranslatable. */
function contentParts(
  blocks: readonly MessagesBlock[],
  state: TranslatedRequest,
  where: string,
): ChatContentPart[] {
  const parts: ChatContentPart[] = [];
  for (const block of blocks) {
    let part: ChatContentPart | null = null;
    if (block.type === 'text' && typeof block.text === 'string') {
      if (block.text !== '') part = { type: 'text', text: block.text };
    } else if (block.type === 'image' && where !== 'system') {
      part = imagePart(block.source as Json | undefined);
      if (!part) state.untranslatable.push(`an image whose source is not base64 or a url`);
    } else {
      state.untranslatable.push(`a "${block.type}" block in a ${where} message`);
    }
    if (!part) {
      state.dropped.push(block);
      continue;
    }
    if (block.cache_control !== undefined) {
      part.cache_control = block.cache_control;
      state.cacheMarkers = true;
    }
    parts.push(part);
  }
  return parts;
}

function imagePart(source: Json | undefined): ChatContentPart | null {
  if (source?.type === 'base64' && typeof source.data === 'string' && typeof source.media_type === 'string')
    return { type: 'image_url', image_url: { url: `data:${source.media_type};base64,${source.data}` } };
  if (source?.type === 'url' && typeof source.url === 'string')
    return { type: 'image_url', image_url: { url: source.url } };
  return null;
}

/** A tool result's text for the `tool` message (a chat tool message takes text only) and its images. */
function toolResultContent(
  content: unknown,
  state: TranslatedRequest,
): { text: string | ChatContentPart[]; images: ChatContentPart[] } {
  if (content === undefined || content === null) return { text: '', images: [] };
  if (typeof content === 'string') return { text: content, images: [] };
  const parts = contentParts(
    Array.isArray(content) ? (content as MessagesBlock[]) : [],
    state,
    'tool_result',
  );
  const texts = parts.filter((part) => part.type === 'text');
  return { text: collapse(texts), images: parts.filter((part) => part.type !== 'text') };
}

/** One plain text part reads (and caches) the same as a bare string. */
function collapse(parts: ChatContentPart[]): string | ChatContentPart[] {
  const only = parts[0];
  if (parts.length === 0) return '';
  if (parts.length === 1 && only?.type === 'text' && only.cache_control === undefined)
    return only.text as string;
  return parts;
}

/** A custom tool (one with an `input_schema`) as a function tool; a server tool has no chat form. */
function functionTool(tool: Json, state: TranslatedRequest): ChatTool[] {
  if (typeof tool.input_schema !== 'object' || tool.input_schema === null) {
    state.dropped.push(tool);
    return [];
  }
  const fn: ChatTool['function'] = { name: String(tool.name), parameters: tool.input_schema as Json };
  if (typeof tool.description === 'string') fn.description = tool.description;
  return [{ type: 'function', function: fn }];
}

function toolChoice(
  choice: MessagesRequest['tool_choice'],
  tools: readonly ChatTool[],
  state: TranslatedRequest,
): ChatToolChoice | undefined {
  switch (choice?.type) {
    case undefined:
      return undefined;
    case 'auto':
      return 'auto';
    case 'any':
      return 'required';
    case 'none':
      return 'none';
    case 'tool': {
      const name = String(choice.name);
      if (!tools.some((tool) => tool.function.name === name))
        state.untranslatable.push(`a tool_choice naming the tool "${name}"`);
      return { type: 'function', function: { name } };
    }
    default:
      state.untranslatable.push(`tool_choice "${choice?.type}"`);
      return undefined;
  }
}
