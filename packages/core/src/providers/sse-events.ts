import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * Server-sent events from a byte stream, parsed by eventsource-parser. Yields each event as it
 * completes, so a consumer sees events as soon as their bytes arrive.
 */
export async function* sseEvents(bytes: AsyncIterable<Uint8Array>): AsyncIterable<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => pending.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of bytes) {
    parser.feed(decoder.decode(chunk, { stream: true }));
    while (pending.length > 0) yield pending.shift()!;
  }
  parser.feed(decoder.decode());
  // A last event without its terminating blank line still counts (some recordings end that way).
  parser.feed('\n\n');
  while (pending.length > 0) yield pending.shift()!;
}
