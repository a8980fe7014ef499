/*
 * Test support: reads a Responses event stream as a client does and checks the rules of product.md
 * "Stream" that hold for every stream, whatever produced it. Used by the writer's unit tests and by
 * the pipeline and end-to-end tests (which import it by a relative path).
 */

// biome-ignore lint/suspicious/noExplicitAny: events are read as plain JSON.
type Json = any;

/** One event as it was framed: its `event:` name and its parsed `data`. */
interface FramedEvent {
  event: string | null;
  data: Json;
}

/** The events of an SSE text, in order (`data: [DONE]` kept as the string it is). */
export function parseEvents(text: string): FramedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | null = null;
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice('event:'.length).trim();
        else if (line.startsWith('data:')) data += line.slice('data:'.length).trimStart();
      }
      return { event, data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** What a client assembles from a stream: per item id its text, arguments or input, and the terminal response. */
interface ReadStream {
  events: FramedEvent[];
  terminal: Json;
  /** Text of each message item, arguments of each function call, input of each custom call, by item id. */
  streamed: Map<string, string>;
}

/**
 * Checks the rules every Responses stream keeps and returns what it told: each event named by
 * `event:` as its `type`; `sequence_number` 0, 1, 2, … without a gap (from `first`); no `[DONE]`;
 * exactly one terminal event, the last; every `*.delta` and `*.done` naming an item added before
 * it at the same `output_index`; each `done` telling the text, arguments or input its deltas added
 * up to; and every item of the terminal response (but a failed one's items cut short) is an item
 * the stream added, at the same index, with the same id. Throws a description of the first rule
 * broken.
 */
export function readResponsesStream(text: string, first = 0): ReadStream {
  const events = parseEvents(text);
  const fail = (why: string, at?: number): never => {
    throw new Error(`${why}${at === undefined ? '' : ` (event ${at}: ${JSON.stringify(events[at]?.data)})`}`);
  };
  const items = new Map<number, string>();
  const streamed = new Map<string, string>();
  let terminal: Json = null;
  events.forEach(({ event, data }, i) => {
    if (data === '[DONE]') fail('a [DONE] event', i);
    if (event !== data.type) fail(`event: ${event} but type ${data.type}`, i);
    if (data.sequence_number !== first + i)
      fail(`sequence_number ${data.sequence_number}, expected ${first + i}`, i);
    if (terminal) fail('an event after the terminal one', i);
    if (TERMINAL.has(data.type)) {
      terminal = data.response;
      return;
    }
    if (data.type === 'response.output_item.added') {
      if (items.has(data.output_index)) fail('a second item at one output_index', i);
      items.set(data.output_index, data.item.id);
      streamed.set(data.item.id, '');
      return;
    }
    if (data.item_id === undefined && data.item === undefined) return;
    const id = data.item_id ?? data.item.id;
    if (items.get(data.output_index) !== id)
      fail(`item ${id} was not added at output_index ${data.output_index}`, i);
    if (data.type.endsWith('.delta')) streamed.set(id, streamed.get(id)! + data.delta);
    const told = data.text ?? data.arguments ?? data.input;
    if (data.type.endsWith('.done') && typeof told === 'string' && told !== streamed.get(id)) {
      fail(
        `${data.type} tells ${JSON.stringify(told)} but the deltas added up to ${JSON.stringify(streamed.get(id))}`,
        i,
      );
    }
  });
  if (!terminal) fail('no terminal event');
  const output: Json[] = terminal.output ?? [];
  output.forEach((item, index) => {
    if (items.get(index) !== item.id)
      fail(`terminal item ${item.id} at ${index} is not the streamed ${items.get(index)}`);
  });
  if (terminal.status !== 'failed' && output.length !== items.size) {
    fail(`the terminal response has ${output.length} items, the stream added ${items.size}`);
  }
  return { events, terminal, streamed };
}
