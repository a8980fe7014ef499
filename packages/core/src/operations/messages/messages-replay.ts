import type { AnthropicEvent } from '../../providers/provider-adapter.js';

type Json = Record<string, unknown>;

/** Blocks whose `input` streams as `input_json_delta` fragments. */
const INPUT_BLOCKS = new Set(['tool_use', 'server_tool_use', 'mcp_tool_use']);

/**
 * A Messages answer as the events a stream of it sends (for a response-cache hit asked for as a
 * stream): `message_start` with the message but no content, per block a `content_block_start`, the
 * block's content as one delta (`text_delta`, `input_json_delta`, `thinking_delta` and its
 * `signature_delta`; a block of another type comes whole in its start), `content_block_stop`; then
 * `message_delta` with the stop reason and usage, and `message_stop`.
 */
export function messageAsEvents(answer: Json): AnthropicEvent[] {
  const { content, stop_reason, stop_sequence, usage, ...rest } = answer;
  const events: AnthropicEvent[] = [
    {
      type: 'message_start',
      message: {
        ...rest,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...(usage as Json), output_tokens: 0 },
      },
    },
  ];
  const blocks = Array.isArray(content) ? (content as Json[]) : [];
  blocks.forEach((block, index) => {
    const delta = (value: Json) => events.push({ type: 'content_block_delta', index, delta: value });
    if (block.type === 'text') {
      const { text, ...start } = block;
      events.push({ type: 'content_block_start', index, content_block: { ...start, text: '' } });
      if (typeof text === 'string' && text !== '') delta({ type: 'text_delta', text });
    } else if (INPUT_BLOCKS.has(String(block.type))) {
      const { input, ...start } = block;
      events.push({ type: 'content_block_start', index, content_block: { ...start, input: {} } });
      const json = JSON.stringify(input ?? {});
      if (json !== '{}') delta({ type: 'input_json_delta', partial_json: json });
    } else if (block.type === 'thinking') {
      const { thinking, signature, ...start } = block;
      events.push({
        type: 'content_block_start',
        index,
        content_block: { ...start, thinking: '', signature: '' },
      });
      if (typeof thinking === 'string' && thinking !== '') delta({ type: 'thinking_delta', thinking });
      if (typeof signature === 'string' && signature !== '') delta({ type: 'signature_delta', signature });
    } else {
      events.push({ type: 'content_block_start', index, content_block: block });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({
    type: 'message_delta',
    delta: { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null },
    usage: usage ?? {},
  });
  events.push({ type: 'message_stop' });
  return events;
}

/**
 * The answer a whole stream of events adds up to, as a non-streamed call would have given it (to
 * keep in the response cache): `message_start`'s message with each block built from its start and
 * deltas (text, thinking and its signature, citations, tool input parsed from its JSON fragments),
 * the stop reason of `message_delta`, and the usage of both, the later counts winning.
 */
export function eventsAsMessage(events: readonly AnthropicEvent[]): Json {
  let message: Json = { type: 'message', role: 'assistant', content: [] };
  const content: Json[] = [];
  const inputs = new Map<number, string>();
  for (const event of events) {
    const index = typeof event.index === 'number' ? event.index : -1;
    switch (event.type) {
      case 'message_start':
        message = { ...(event.message as Json) };
        break;
      case 'content_block_start':
        content[index] = { ...(event.content_block as Json) };
        if (INPUT_BLOCKS.has(String(content[index].type))) inputs.set(index, '');
        break;
      case 'content_block_delta':
        if (content[index]) applyDelta(content[index], event.delta as Json, inputs, index);
        break;
      case 'content_block_stop':
        finishInput(content[index], inputs, index);
        break;
      case 'message_delta': {
        const delta = (event.delta ?? {}) as Json;
        message.stop_reason = delta.stop_reason ?? null;
        message.stop_sequence = delta.stop_sequence ?? null;
        message.usage = { ...(message.usage as Json), ...(event.usage as Json) };
        break;
      }
    }
  }
  // A block cut off by max_tokens never got its content_block_stop.
  for (const [index, block] of content.entries()) finishInput(block, inputs, index);
  return { ...message, content: content.filter(Boolean) };
}

function applyDelta(block: Json, delta: Json, inputs: Map<number, string>, index: number): void {
  const append = (field: string, text: unknown) => {
    if (typeof text === 'string')
      block[field] = `${typeof block[field] === 'string' ? block[field] : ''}${text}`;
  };
  switch (delta.type) {
    case 'text_delta':
      append('text', delta.text);
      break;
    case 'input_json_delta':
      if (typeof delta.partial_json === 'string')
        inputs.set(index, (inputs.get(index) ?? '') + delta.partial_json);
      break;
    case 'thinking_delta':
      append('thinking', delta.thinking);
      break;
    case 'signature_delta':
      block.signature = delta.signature;
      break;
    case 'citations_delta':
      block.citations = [...(Array.isArray(block.citations) ? block.citations : []), delta.citation];
      break;
  }
}

function finishInput(block: Json | undefined, inputs: Map<number, string>, index: number): void {
  const json = inputs.get(index);
  if (!block || json === undefined) return;
  inputs.delete(index);
  if (json === '') return;
  try {
    block.input = JSON.parse(json);
  } catch {
    // Cut off mid-argument: the input stays as its start gave it.
  }
}
