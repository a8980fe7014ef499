/*
 * Anthropic's stream grammar as a checker, for the tests of the translated stream (unit and end to
 * end): what a Messages client's accumulator relies on, and what the known gateway bugs break.
 */

// biome-ignore lint/suspicious/noExplicitAny: events are read as plain JSON.
type Json = any;

/** One SSE event of a Messages stream: its `event:` name and its data, parsed. */
interface ParsedEvent {
  event: string | null;
  data: Json;
}

/** Splits an SSE text into its events (`event:` / `data:` lines, blank-line separated), data parsed. */
export function parseEvents(text: string): ParsedEvent[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      return { event, data: JSON.parse(data.join('\n')) };
    });
}

const DELTA_OF_BLOCK: Record<string, string[]> = {
  text: ['text_delta', 'citations_delta'],
  tool_use: ['input_json_delta'],
  server_tool_use: ['input_json_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
};

/**
 * The grammar's violations in a complete stream (empty when it holds): every event named as its
 * data's `type`; exactly one `message_start`, first, with `input_tokens` > 0; blocks numbered 0, 1,
 * 2… each opened once, its deltas of its own kind (`text_delta` only in a text block,
 * `input_json_delta` only in a `tool_use` block, none empty), closed once before the next opens;
 * then exactly one `message_delta` with a `stop_reason` and usage, and one `message_stop`, last.
 */
export function grammarViolations(events: readonly ParsedEvent[]): string[] {
  const out: string[] = [];
  const types = events.map((e) => e.data?.type);
  events.forEach((e, i) => {
    if (e.event !== e.data?.type) out.push(`event ${i} is named ${e.event} but its type is ${e.data?.type}`);
  });
  const count = (type: string) => types.filter((t) => t === type).length;
  if (count('message_start') !== 1) out.push(`${count('message_start')} message_start events`);
  if (types[0] !== 'message_start') out.push(`the first event is ${types[0]}`);
  const start = events.find((e) => e.data.type === 'message_start')?.data;
  if (!(start?.message?.usage?.input_tokens > 0))
    out.push(`message_start has input_tokens ${start?.message?.usage?.input_tokens}`);
  if (count('message_delta') !== 1) out.push(`${count('message_delta')} message_delta events`);
  if (count('message_stop') !== 1 || types.at(-1) !== 'message_stop')
    out.push('message_stop is not once and last');
  const delta = events.find((e) => e.data.type === 'message_delta')?.data;
  if (
    delta &&
    (typeof delta.delta?.stop_reason !== 'string' || typeof delta.usage?.output_tokens !== 'number')
  )
    out.push(`message_delta lacks stop_reason or usage: ${JSON.stringify(delta)}`);
  let open: { index: number; type: string } | null = null;
  let next = 0;
  let afterDelta = false;
  for (const { data } of events) {
    if (data.type === 'message_delta') afterDelta = true;
    if (data.type === 'content_block_start') {
      if (afterDelta) out.push('a block starts after message_delta');
      if (open) out.push(`block ${data.index} starts while block ${open.index} is open`);
      if (data.index !== next) out.push(`block ${data.index} starts where ${next} was due`);
      open = { index: data.index, type: data.content_block?.type };
      next = data.index + 1;
    } else if (data.type === 'content_block_delta') {
      if (!open || open.index !== data.index) out.push(`a delta for block ${data.index}, which is not open`);
      else if (!(DELTA_OF_BLOCK[open.type] ?? []).includes(data.delta?.type))
        out.push(`a ${data.delta?.type} in a ${open.type} block`);
      const text = data.delta?.text ?? data.delta?.partial_json ?? data.delta?.thinking;
      if (text === '') out.push(`an empty ${data.delta?.type} in block ${data.index}`);
    } else if (data.type === 'content_block_stop') {
      if (!open || open.index !== data.index) out.push(`block ${data.index} stops but is not open`);
      open = null;
    }
  }
  if (open) out.push(`block ${open.index} never stops`);
  return out;
}

/** What a client accumulates from the events: the text, the tool calls (input parsed), the stop reason. */
export function accumulateEvents(events: readonly ParsedEvent[]) {
  let text = '';
  const tools: { id: string; name: string; input: unknown }[] = [];
  const json = new Map<number, string>();
  const byIndex = new Map<number, (typeof tools)[number]>();
  let stopReason: string | null = null;
  for (const { data } of events) {
    if (data.type === 'content_block_start' && data.content_block?.type === 'tool_use') {
      const tool = {
        id: data.content_block.id,
        name: data.content_block.name,
        input: data.content_block.input,
      };
      tools.push(tool);
      byIndex.set(data.index, tool);
      json.set(data.index, '');
    } else if (data.type === 'content_block_delta') {
      if (data.delta.type === 'text_delta') text += data.delta.text;
      if (data.delta.type === 'input_json_delta')
        json.set(data.index, (json.get(data.index) ?? '') + data.delta.partial_json);
    } else if (data.type === 'content_block_stop' && json.has(data.index)) {
      const fragments = json.get(data.index)!;
      if (fragments !== '') byIndex.get(data.index)!.input = JSON.parse(fragments);
    } else if (data.type === 'message_delta') {
      stopReason = data.delta.stop_reason;
    }
  }
  return { text, tools, stopReason };
}
