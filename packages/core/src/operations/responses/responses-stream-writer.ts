import type { ServedView } from '../../metering/price-usage.js';
import type { ChunkReading, StreamEnd, StreamWriter } from '../../pipeline/inference-operation.js';
import type { ChatCompletionChunk } from '../../providers/chat-types.js';
import type { ResponsesStreamEvent } from '../../providers/provider-adapter.js';
import { readChatChunk } from '../chat/chat-stream-writer.js';
import type { MakeId } from './chat-to-response.js';
import { readNativeEvent } from './native-answer.js';
import { type ResponseStamp, responseEnd, responseShell, responsesUsage } from './response-object.js';
import type { ResponsesRequest, ResponsesTool } from './responses-types.js';
import { streamFailure } from './stream-failure.js';
import { EventFramer, TranslatedEvents } from './translated-events.js';

/** What a Responses stream carries: chat chunks (a translated route) or the upstream's own events (native). */
export type ResponsesChunk = ChatCompletionChunk | ResponsesStreamEvent;

/** Whether a chunk is a chat chunk (a translated route) rather than a Responses event. */
export const isChatChunk = (chunk: ResponsesChunk): chunk is ChatCompletionChunk => 'choices' in chunk;

/** What a writer needs of its request. */
export interface WriterContext {
  wire: ResponsesRequest;
  /** The tools the Response echoes. */
  tools: readonly ResponsesTool[];
  /** Names of the chat functions that stand for custom tools. */
  custom: ReadonlySet<string>;
  makeId: MakeId;
  /** The Response's id (`resp_…`, one per request). */
  responseId: string;
  now: () => number;
}

type Json = Record<string, unknown>;

/**
 * The Responses stream of one request (product.md "Stream"): events framed as `event: <type>` with
 * `sequence_number` 0, 1, 2, … and exactly one terminal event whose `response` holds the whole
 * output under the same item ids. A translated route's chat chunks become Responses events
 * (`TranslatedEvents`), after `response.created` and `response.in_progress`; a native route's
 * events pass through as they came, the terminal one held back until the charge is settled. The
 * end is `response.completed` (or `response.incomplete`) with `response.gateway`; after a break,
 * `response.failed` with the code `streamFailure` gives (and the `gateway` object of its charge).
 * No `[DONE]`.
 */
export function responsesStreamWriter(
  context: WriterContext,
  served: ServedView,
): StreamWriter<ResponsesChunk> {
  const framer = new EventFramer();
  const stamp: ResponseStamp = { id: context.responseId, model: served.model, createdAt: context.now() };
  const shell = responseShell(context.wire, context.tools, stamp);
  const translated = new TranslatedEvents(framer, context.custom, context.makeId);
  let started = false;
  /** A native stream's Response as its first events showed it, and its terminal event, held back. */
  let snapshot: Json | null = null;
  let terminal: ResponsesStreamEvent | null = null;

  const start = (): string => {
    if (started) return '';
    started = true;
    const response = { response: shell };
    return framer.frame('response.created', response) + framer.frame('response.in_progress', response);
  };

  return {
    write(chunk) {
      if (isChatChunk(chunk)) {
        const reading: ChunkReading = readChatChunk(chunk);
        return { reading, text: start() + translated.chunk(chunk) };
      }
      started = true;
      const reading = readNativeEvent(chunk);
      if (typeof chunk.sequence_number === 'number') framer.followed(chunk.sequence_number);
      if (chunk.type === 'response.created' || chunk.type === 'response.in_progress') {
        snapshot = (chunk.response as Json | undefined) ?? snapshot;
      }
      if (chunk.type === 'response.completed' || chunk.type === 'response.incomplete') {
        terminal = chunk;
        return { reading, text: '' };
      }
      return { reading, text: framer.raw(chunk.type, JSON.stringify(chunk)) };
    },

    end({ finishReason, usage, gateway, error }: StreamEnd) {
      const now = Math.floor(context.now() / 1000);
      if (snapshot || terminal) {
        if (terminal && !error) {
          const response = { ...(terminal.response as Json), gateway };
          return framer.raw(terminal.type, JSON.stringify({ ...terminal, response }));
        }
        const failed = error ? { status: 'failed', error: streamFailure(error) } : { status: 'completed' };
        const response = { ...snapshot, ...failed, usage: responsesUsage(usage), gateway };
        return framer.frame(error ? 'response.failed' : 'response.completed', { response });
      }
      let out = start();
      if (error) {
        translated.abandon();
        const response = {
          ...shell,
          status: 'failed',
          error: streamFailure(error),
          output: translated.items,
          usage: responsesUsage(usage),
          gateway,
        };
        return out + framer.frame('response.failed', { response });
      }
      const ending = responseEnd(finishReason);
      out += translated.close(ending.status === 'completed' ? 'completed' : 'incomplete');
      const response = {
        ...shell,
        status: ending.status,
        completed_at: ending.status === 'completed' ? now : null,
        incomplete_details: ending.incomplete_details,
        output: translated.items,
        usage: responsesUsage(usage),
        gateway,
      };
      return out + framer.frame(`response.${ending.status}`, { response });
    },
  };
}
