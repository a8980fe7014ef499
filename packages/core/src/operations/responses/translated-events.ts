import type { ChatCompletionChunk, ChatToolCallDelta } from '../../providers/chat-types.js';
import { customInput, type MakeId } from './chat-to-response.js';
import type { ItemStatus, OutputItem, OutputText } from './responses-types.js';

/** Numbers and frames the events of one stream: `event: <type>` and the JSON with its `sequence_number`. */
export class EventFramer {
  #next = 0;

  /** The SSE text of an event whose fields (other than `type` and `sequence_number`) are `fields`. */
  frame(type: string, fields: Record<string, unknown>): string {
    return this.raw(type, JSON.stringify({ type, sequence_number: this.#next++, ...fields }));
  }

  /** An event whose JSON the caller wrote, given the sequence number it must carry (see {@link take}). */
  raw(type: string, json: string): string {
    return `event: ${type}\ndata: ${json}\n\n`;
  }

  /** The next sequence number, for an event written by hand. */
  take(): number {
    return this.#next++;
  }

  /** Continues after an upstream's own numbering (native streams pass their numbers through). */
  followed(sequenceNumber: number): void {
    this.#next = Math.max(this.#next, sequenceNumber + 1);
  }
}

type MessageItem = Extract<OutputItem, { type: 'message' }>;
type CallItem = Extract<OutputItem, { type: 'function_call' | 'custom_tool_call' }>;

interface OpenText {
  item: MessageItem;
  index: number;
  text: string;
}

interface OpenCall {
  item: CallItem;
  index: number;
  args: string;
}

/**
 * The Responses events of a translated stream, from chat chunks (product.md "Stream"): per text
 * item `output_item.added`, `content_part.added`, `output_text.delta`…, then (when a tool call
 * starts, or at the end) `output_text.done`, `content_part.done`, `output_item.done`; per tool call
 * `output_item.added`, `function_call_arguments.delta`… and at the end
 * `function_call_arguments.done`, `output_item.done`. A custom tool's call is one
 * `custom_tool_call` item whose input is told whole at the end (it arrives wrapped in JSON). Items
 * keep their id from `added` to the terminal response. Only the first choice is read.
 */
export class TranslatedEvents {
  /** Every item opened so far, in output order, as the terminal response shows them. */
  readonly items: OutputItem[] = [];
  #text: OpenText | null = null;
  readonly #calls = new Map<number, OpenCall>();

  constructor(
    private readonly framer: EventFramer,
    private readonly custom: ReadonlySet<string>,
    private readonly makeId: MakeId,
  ) {}

  /** The events of one chat chunk. */
  chunk(chunk: ChatCompletionChunk): string {
    const choice = chunk.choices.length === 1 ? chunk.choices[0] : chunk.choices.find((c) => c.index === 0);
    const delta = choice?.delta;
    if (!delta) return '';
    let out = '';
    if (typeof delta.content === 'string' && delta.content !== '') out += this.#textDelta(delta.content);
    if (delta.tool_calls) for (const call of delta.tool_calls) out += this.#callDelta(call);
    return out;
  }

  /** The `done` events of every item still open, each with `status`. */
  close(status: ItemStatus): string {
    let out = this.#closeText(status);
    for (const call of this.#calls.values()) out += this.#closeCall(call, status);
    this.#calls.clear();
    return out;
  }

  /** Marks the items still open as cut short (a broken stream tells no `done` for them). */
  abandon(): void {
    for (const item of this.items) if (item.status === 'in_progress') item.status = 'incomplete';
  }

  #textDelta(delta: string): string {
    let out = '';
    if (!this.#text) {
      const item: MessageItem = {
        type: 'message',
        id: this.makeId('msg'),
        status: 'in_progress',
        role: 'assistant',
        content: [],
      };
      const index = this.items.push(item) - 1;
      this.#text = { item, index, text: '' };
      out += this.framer.frame('response.output_item.added', { output_index: index, item });
      out += this.framer.frame('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: outputText(''),
      });
    }
    const open = this.#text;
    open.text += delta;
    const sequence = this.framer.take();
    return (
      out +
      this.framer.raw(
        'response.output_text.delta',
        `{"type":"response.output_text.delta","sequence_number":${sequence},"item_id":"${open.item.id}","output_index":${open.index},"content_index":0,"delta":${JSON.stringify(delta)},"logprobs":[]}`,
      )
    );
  }

  #callDelta(delta: ChatToolCallDelta): string {
    const key = typeof delta.index === 'number' ? delta.index : 0;
    const fragment = delta.function?.arguments ?? '';
    let open = this.#calls.get(key);
    let out = '';
    if (!open) {
      // A tool call starts: the text before it is done (text after it opens a new message item).
      out += this.#closeText('completed');
      const name = delta.function?.name ?? '';
      const callId = delta.id ?? this.makeId('call');
      const item: CallItem = this.custom.has(name)
        ? {
            type: 'custom_tool_call',
            id: this.makeId('ctc'),
            status: 'in_progress',
            call_id: callId,
            name,
            input: '',
          }
        : {
            type: 'function_call',
            id: this.makeId('fc'),
            status: 'in_progress',
            call_id: callId,
            name,
            arguments: '',
          };
      const index = this.items.push(item) - 1;
      open = { item, index, args: '' };
      this.#calls.set(key, open);
      out += this.framer.frame('response.output_item.added', { output_index: index, item });
    } else if (delta.function?.name) {
      open.item.name += delta.function.name;
    }
    open.args += fragment;
    if (fragment !== '' && open.item.type === 'function_call') {
      out += this.framer.frame('response.function_call_arguments.delta', {
        item_id: open.item.id,
        output_index: open.index,
        delta: fragment,
      });
    }
    return out;
  }

  #closeText(status: ItemStatus): string {
    const open = this.#text;
    if (!open) return '';
    this.#text = null;
    const part = outputText(open.text);
    open.item.content = [part];
    open.item.status = status;
    const at = { item_id: open.item.id, output_index: open.index, content_index: 0 };
    return (
      this.framer.frame('response.output_text.done', { ...at, text: open.text, logprobs: [] }) +
      this.framer.frame('response.content_part.done', { ...at, part }) +
      this.framer.frame('response.output_item.done', { output_index: open.index, item: open.item })
    );
  }

  #closeCall(open: OpenCall, status: ItemStatus): string {
    const { item, index } = open;
    item.status = status;
    const at = { item_id: item.id, output_index: index };
    let out = '';
    if (item.type === 'function_call') {
      item.arguments = open.args;
      out += this.framer.frame('response.function_call_arguments.done', {
        ...at,
        name: item.name,
        arguments: open.args,
      });
    } else {
      item.input = customInput(open.args);
      if (item.input !== '') {
        out += this.framer.frame('response.custom_tool_call_input.delta', { ...at, delta: item.input });
      }
      out += this.framer.frame('response.custom_tool_call_input.done', { ...at, input: item.input });
    }
    return out + this.framer.frame('response.output_item.done', { output_index: index, item });
  }
}

function outputText(text: string): OutputText {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}
