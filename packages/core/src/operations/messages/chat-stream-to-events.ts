import type { ChatCompletionChunk, TokenUsage } from '../../providers/chat-types.js';
import { messagesStopReason, messagesUsage } from './chat-to-messages.js';

/** One Anthropic stream event as SSE text: `event: <type>` and its JSON. */
export function eventText(event: { type: string; [field: string]: unknown }): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/** What the translated stream opens with. */
export interface TranslatedHead {
  /** The answer's `msg_…` id. */
  id: string;
  /** The served model's id. */
  model: string;
  /** `message_start`'s `usage.input_tokens`: the pre-flight estimate (a chat upstream tells its count last). */
  inputTokens: number;
}

/** The events a chat stream becomes, chunk by chunk, then at its end. */
interface ChatStreamToEvents {
  /** Whether `message_start` was written. */
  readonly started: boolean;
  /** The events one chat chunk becomes (`message_start` before the first): `''` when none. */
  chunk(chunk: ChatCompletionChunk): string;
  /** The events that end a complete stream: the open block's stop, `message_delta`, `message_stop`. */
  finish(finishReason: string | null, usage: TokenUsage): string;
  /** Before an `error` event ends a broken stream: `message_start` if it was not written yet. */
  beforeError(): string;
}

type OpenBlock = { kind: 'text'; index: number } | { kind: 'tool'; index: number; call: number } | null;

/**
 * Chat chunks → Anthropic's stream grammar (product.md): exactly one `message_start`, then per
 * content block one `content_block_start`, its deltas (`text_delta` in a text block,
 * `input_json_delta` in a `tool_use` block, never an empty one) and one `content_block_stop`, blocks
 * numbered 0, 1, 2… and never interleaved; then one `message_delta` with `stop_reason` and the final
 * usage, and one `message_stop`. Only the first choice is translated (a Messages answer has one).
 * Reasoning deltas are dropped: a thinking block needs a signature only Anthropic can give.
 *
 * Tool calls are taken in the order they start, as OpenAI-format upstreams stream them: a call's
 * id, name and first argument fragment may share a chunk with the end of the text before it, and
 * each goes to its own block. A fragment for a call whose block was already closed (no upstream
 * sends one) cannot be placed in Anthropic's grammar and is left out.
 */
export function chatStreamToEvents(head: TranslatedHead): ChatStreamToEvents {
  let started = false;
  let blocks = 0;
  let open: OpenBlock = null;
  const calls = new Set<number>();

  const start = () => {
    if (started) return '';
    started = true;
    return eventText({
      type: 'message_start',
      message: {
        id: head.id,
        type: 'message',
        role: 'assistant',
        model: head.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: head.inputTokens,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      },
    });
  };
  const close = () => {
    if (!open) return '';
    const text = eventText({ type: 'content_block_stop', index: open.index });
    open = null;
    return text;
  };
  const delta = (index: number, delta: Record<string, unknown>) =>
    eventText({ type: 'content_block_delta', index, delta });

  const text = (content: string) => {
    let out = '';
    if (open?.kind !== 'text') {
      out += close();
      open = { kind: 'text', index: blocks++ };
      out += eventText({
        type: 'content_block_start',
        index: open.index,
        content_block: { type: 'text', text: '' },
      });
    }
    return out + delta(open.index, { type: 'text_delta', text: content });
  };

  const toolCall = (
    part: NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number],
  ) => {
    const call = typeof part.index === 'number' ? part.index : 0;
    const fragment = part.function?.arguments ?? '';
    let out = '';
    if (!(open?.kind === 'tool' && open.call === call)) {
      if (calls.has(call)) return '';
      calls.add(call);
      out += close();
      open = { kind: 'tool', index: blocks++, call };
      out += eventText({
        type: 'content_block_start',
        index: open.index,
        content_block: {
          type: 'tool_use',
          id: part.id ?? `toolu_${head.id.slice('msg_'.length)}_${call}`,
          name: part.function?.name ?? '',
          input: {},
        },
      });
    }
    if (fragment !== '') out += delta(open.index, { type: 'input_json_delta', partial_json: fragment });
    return out;
  };

  return {
    get started() {
      return started;
    },
    chunk(chunk) {
      let out = start();
      for (const choice of chunk.choices) {
        if ((choice.index ?? 0) !== 0) continue;
        const { content, tool_calls: toolCalls } = choice.delta ?? {};
        if (typeof content === 'string' && content !== '') out += text(content);
        for (const part of toolCalls ?? []) out += toolCall(part);
        if (choice.finish_reason) out += close();
      }
      return out;
    },
    finish(finishReason, usage) {
      return (
        start() +
        close() +
        eventText({
          type: 'message_delta',
          delta: { stop_reason: messagesStopReason(finishReason), stop_sequence: null },
          usage: messagesUsage(usage),
        }) +
        eventText({ type: 'message_stop' })
      );
    },
    beforeError: start,
  };
}
