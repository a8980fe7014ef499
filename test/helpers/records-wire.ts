import { fixtureWireBody, readFixture, sseEventsOf } from './wire-fixtures.js';

/**
 * Upstream replies in the recorded wire shapes, with content of the test's choosing: each builder
 * starts from a recorded fixture (ids, envelope fields, usage layout, event order) and swaps in the
 * text, tool call and token counts given.
 */

export interface ReplyContent {
  /** Assistant text (may be empty). */
  text: string;
  /** One tool call, with its arguments as a JSON string. */
  toolCall?: { id: string; name: string; arguments: string };
  usage: { prompt: number; completion: number; cached?: number };
}

/** Splits `text` into `parts` pieces (the last may be shorter), as a provider's deltas would. */
function pieces(text: string, parts: number): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// ── OpenAI Chat Completions ───────────────────────────────────────────────────────────────────

/** The second recorded body of the cached-tokens fixture (`prompt_tokens` 10122, `cached_tokens` 9984), as is. */
export function recordedOpenAiCompletion(): Record<string, unknown> {
  const recorded = JSON.parse(readFixture('openai-chat-completion-cached-tokens.recorded.json'));
  return recorded.attempts[1].rawResponseBody;
}

/** A non-streaming OpenAI body in the recorded shape (`openai-chat-completion-cached-tokens`). */
export function openAiCompletion(content: ReplyContent): Record<string, unknown> {
  const body = structuredClone(recordedOpenAiCompletion()) as {
    choices: { message: Record<string, unknown>; finish_reason: string }[];
    usage: Record<string, unknown> & { prompt_tokens_details: Record<string, unknown> };
  };
  const choice = body.choices[0]!;
  choice.message.content = content.text === '' ? null : content.text;
  if (content.toolCall) {
    choice.message.tool_calls = [
      {
        id: content.toolCall.id,
        type: 'function',
        function: { name: content.toolCall.name, arguments: content.toolCall.arguments },
      },
    ];
    choice.finish_reason = 'tool_calls';
  }
  body.usage.prompt_tokens = content.usage.prompt;
  body.usage.completion_tokens = content.usage.completion;
  body.usage.total_tokens = content.usage.prompt + content.usage.completion;
  body.usage.prompt_tokens_details.cached_tokens = content.usage.cached ?? 0;
  return body;
}

/**
 * A streamed OpenAI reply in the recorded shape (`openai-chat-stream-single-tool-call-include-usage.sse`):
 * a role chunk, content deltas, the tool call's first delta (id, type, name) then its argument
 * fragments, a `finish_reason` chunk, a usage chunk with `choices: []`, then `[DONE]`.
 */
export function openAiStreamEvents(content: ReplyContent): string[] {
  const recorded = sseEventsOf(fixtureWireBody('openai-chat-stream-single-tool-call-include-usage.sse'));
  const first = JSON.parse(recorded[0]!.replace(/^data: /, ''));
  const envelope = {
    id: first.id,
    object: first.object,
    created: first.created,
    model: first.model,
    system_fingerprint: first.system_fingerprint,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...envelope, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
  const events = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of pieces(content.text, 4)) events.push(chunk({ content: piece }));
  if (content.toolCall) {
    const { id, name, arguments: args } = content.toolCall;
    events.push(
      chunk({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] }),
    );
    for (const piece of pieces(args, 5))
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
  }
  events.push(chunk({}, content.toolCall ? 'tool_calls' : 'stop'));
  const usage = {
    prompt_tokens: content.usage.prompt,
    completion_tokens: content.usage.completion,
    total_tokens: content.usage.prompt + content.usage.completion,
    prompt_tokens_details: { cached_tokens: content.usage.cached ?? 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
  events.push(`data: ${JSON.stringify({ ...envelope, choices: [], usage })}\n\n`);
  events.push('data: [DONE]\n\n');
  return events;
}

// ── Anthropic Messages ────────────────────────────────────────────────────────────────────────

/** A non-streaming Anthropic body in the recorded shape (`anthropic-message-text-and-tool-use-no-args.json`). */
export function anthropicMessage(content: ReplyContent): Record<string, unknown> {
  const body = JSON.parse(readFixture('anthropic-message-text-and-tool-use-no-args.json'));
  const blocks: unknown[] = [];
  if (content.text !== '') blocks.push({ type: 'text', text: content.text });
  if (content.toolCall) {
    blocks.push({
      type: 'tool_use',
      id: content.toolCall.id,
      name: content.toolCall.name,
      input: JSON.parse(content.toolCall.arguments),
    });
  }
  body.content = blocks;
  body.stop_reason = content.toolCall ? 'tool_use' : 'end_turn';
  const cached = content.usage.cached ?? 0;
  body.usage.input_tokens = content.usage.prompt - cached;
  body.usage.cache_read_input_tokens = cached;
  body.usage.output_tokens = content.usage.completion;
  return body;
}

/**
 * A streamed Anthropic reply in the recorded shape (`anthropic-stream-text-then-tool-use.sse`):
 * message_start, a text block (with a `ping`), a tool_use block fed by `input_json_delta`
 * fragments, message_delta with the stop reason and output tokens, message_stop. No `[DONE]`.
 */
export function anthropicStreamEvents(content: ReplyContent): string[] {
  const recorded = sseEventsOf(fixtureWireBody('anthropic-stream-text-then-tool-use.sse'));
  const startLine = recorded[0]!.split('\n').find((line) => line.startsWith('data: '))!;
  const start = JSON.parse(startLine.slice('data: '.length));
  const cached = content.usage.cached ?? 0;
  start.message.usage.input_tokens = content.usage.prompt - cached;
  start.message.usage.cache_read_input_tokens = cached;
  const event = (data: Record<string, unknown>) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
  const events = [event(start)];
  let index = 0;
  if (content.text !== '') {
    events.push(event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    events.push('event: ping\ndata: {"type": "ping"}\n\n');
    for (const piece of pieces(content.text, 4)) {
      events.push(event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }));
    }
    events.push(event({ type: 'content_block_stop', index }));
    index += 1;
  }
  if (content.toolCall) {
    const { id, name, arguments: args } = content.toolCall;
    events.push(
      event({ type: 'content_block_start', index, content_block: { type: 'tool_use', id, name, input: {} } }),
    );
    events.push(
      event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: '' } }),
    );
    for (const piece of pieces(args, 5)) {
      events.push(
        event({
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json: piece },
        }),
      );
    }
    events.push(event({ type: 'content_block_stop', index }));
  }
  events.push(
    event({
      type: 'message_delta',
      delta: { stop_reason: content.toolCall ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: content.usage.completion },
    }),
  );
  events.push(event({ type: 'message_stop' }));
  return events;
}
