import type { ChatCompletionChunk } from '../chat-types.js';
import { describeSchemaError } from '../describe-schema-error.js';
import type { CompletionStream } from '../provider-adapter.js';
import { type SseConverter, sseChunks } from '../sse-chunks.js';
import { UpstreamError } from '../upstream-error.js';
import {
  type AnthropicStreamEvent,
  type AnthropicUsage,
  anthropicStreamEventSchema,
} from './anthropic-wire-schemas.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';
import { mergeAnthropicUsage, toTokenUsage } from './map-anthropic-usage.js';

type Delta = ChatCompletionChunk['choices'][number]['delta'];

/** What the converter remembers about one open content block, by Anthropic block index. */
type BlockState =
  | { kind: 'text' }
  | { kind: 'tool'; toolIndex: number; hasArguments: boolean }
  | { kind: 'ignored' };

/**
 * Anthropic SSE events (from the stream's bytes, `sseChunks`) → OpenAI chat-completion chunks, for
 * the official SDK's accumulator:
 * a first chunk with `role`, `content` deltas, tool-call deltas indexed 0, 1, 2… over tool blocks
 * only (the first carries id, type and name; a call that got no argument fragment gets `"{}"` when
 * its block ends), then one chunk with the mapped `finish_reason`. Usage is not sent as a chunk;
 * `usage()` returns what message_start and message_delta reported so far (also after a failure).
 *
 * Iterating throws `UpstreamError('network', …)` on an `error` event, on an event that is not
 * valid JSON of a known shape, and when the events end before message_delta gave a finish reason.
 * `nowMs` (epoch ms) gives every chunk's `created`.
 */
export function convertAnthropicStream(bytes: AsyncIterable<Uint8Array>, nowMs: number): CompletionStream {
  let usage: AnthropicUsage | null = null;
  const recordUsage = (next: AnthropicUsage | null | undefined) => {
    usage = mergeAnthropicUsage(usage, next);
  };

  const created = Math.floor(nowMs / 1000);
  let head: { id: string; model: string } | null = null;
  const blocks = new Map<number, BlockState>();
  let toolCount = 0;
  let finished = false;

  const chunk = (delta: Delta, finishReason: string | null = null): ChatCompletionChunk => {
    if (!head) throw new UpstreamError('network', 'anthropic: stream content before message_start');
    return {
      id: head.id,
      object: 'chat.completion.chunk',
      created,
      model: head.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  };
  const toolArguments = (state: { toolIndex: number }, text: string) =>
    chunk({ tool_calls: [{ index: state.toolIndex, function: { arguments: text } }] });

  const converter: SseConverter<ChatCompletionChunk> = {
    event(message, emit) {
      const event = parseEvent(message.data);
      if (!head && !HEADLESS_EVENTS.has(event.type)) {
        throw new UpstreamError('network', `anthropic: stream event ${event.type} before message_start`);
      }
      switch (event.type) {
        case 'message_start':
          head = { id: event.message.id, model: event.message.model };
          recordUsage(event.message.usage);
          emit(chunk({ role: 'assistant', content: '' }));
          break;
        case 'content_block_start': {
          const block = event.content_block;
          if (block.type === 'text') {
            blocks.set(event.index, { kind: 'text' });
            if (block.text) emit(chunk({ content: block.text }));
          } else if (block.type === 'tool_use') {
            const initial = initialArguments(block.input);
            const state = { kind: 'tool' as const, toolIndex: toolCount++, hasArguments: initial !== '' };
            blocks.set(event.index, state);
            emit(
              chunk({
                tool_calls: [
                  {
                    index: state.toolIndex,
                    id: block.id,
                    type: 'function',
                    function: { name: block.name, arguments: initial },
                  },
                ],
              }),
            );
          } else {
            blocks.set(event.index, { kind: 'ignored' });
          }
          break;
        }
        case 'content_block_delta': {
          const state = blocks.get(event.index);
          const delta = event.delta;
          if (state?.kind === 'text' && delta.type === 'text_delta' && delta.text !== '') {
            emit(chunk({ content: delta.text }));
          } else if (
            state?.kind === 'tool' &&
            delta.type === 'input_json_delta' &&
            delta.partial_json !== ''
          ) {
            state.hasArguments = true;
            emit(toolArguments(state, delta.partial_json));
          }
          break;
        }
        case 'content_block_stop': {
          const state = blocks.get(event.index);
          blocks.delete(event.index);
          if (state?.kind === 'tool' && !state.hasArguments) emit(toolArguments(state, '{}'));
          break;
        }
        case 'message_delta':
          // A block cut off by max_tokens never gets its content_block_stop.
          for (const state of blocks.values()) {
            if (state.kind === 'tool' && !state.hasArguments) emit(toolArguments(state, '{}'));
          }
          blocks.clear();
          recordUsage(event.usage);
          finished = true;
          emit(chunk({}, mapAnthropicStopReason(event.delta.stop_reason)));
          break;
        case 'message_stop':
          if (!finished) emit(chunk({}, 'stop'));
          return true;
        case 'error':
          throw new UpstreamError(
            'network',
            `anthropic: ${event.error.message}`,
            null,
            null,
            event.error.type ?? null,
          );
        case 'ping':
        case 'other':
          break;
        default: {
          const unknownEvent: never = event;
          throw new Error(`unhandled event ${JSON.stringify(unknownEvent)}`);
        }
      }
      return false;
    },
    end() {
      if (!finished)
        throw new UpstreamError('network', 'anthropic: stream ended before the message finished');
    },
  };

  return { chunks: sseChunks(bytes, converter), usage: () => (usage ? toTokenUsage(usage) : null) };
}

/** Events that may come before message_start (anything else there is a broken stream). */
const HEADLESS_EVENTS = new Set<AnthropicStreamEvent['type']>(['message_start', 'ping', 'error', 'other']);

/** A stream event's data as JSON; data that is not JSON breaks the stream (`UpstreamError('network')`). */
export function eventJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new UpstreamError('network', 'anthropic: a stream event is not valid JSON');
  }
}

function parseEvent(data: string): AnthropicStreamEvent {
  const json = eventJson(data);
  const parsed = anthropicStreamEventSchema.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamError(
      'network',
      `anthropic: malformed stream event (${describeSchemaError(parsed.error)})`,
    );
  }
  return parsed.data;
}

/** content_block_start carries `input: {}`; anything non-empty there is the call's arguments already. */
function initialArguments(input: unknown): string {
  if (input === undefined || input === null) return '';
  if (typeof input === 'object' && Object.keys(input).length === 0) return '';
  return JSON.stringify(input);
}
