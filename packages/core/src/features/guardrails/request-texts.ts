/**
 * The texts a guardrail reads: of a request (every message's text parts and tool-call arguments;
 * an embeddings `input`; an image `prompt`; a rerank `query` and `documents`) and of an answer (each
 * choice's content and tool-call arguments; a Messages answer's content blocks; a Response's output
 * items). Shape-based, so it needs no endpoint's types.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;

/** The texts of a request body, each to be matched on its own. */
export function requestTexts(body: Json): string[] {
  const texts: string[] = [];
  if (Array.isArray(body.messages)) {
    for (const message of body.messages) {
      if (isObject(message)) messageTexts(message, texts);
    }
  }
  for (const field of ['input', 'prompt', 'query', 'documents'] as const) {
    stringsOf(body[field], texts);
  }
  return texts;
}

/**
 * The texts of an answer body: a chat answer's `choices[].message`, a Messages answer's `content`
 * blocks, or a Response's `output` items (message text and refusals, function-call arguments,
 * custom tool-call input).
 */
export function answerTexts(answer: Json): string[] {
  const texts: string[] = [];
  if (Array.isArray(answer.content)) {
    for (const block of answer.content) if (isObject(block)) blockTexts(block, texts);
    return texts;
  }
  if (Array.isArray(answer.output)) {
    for (const item of answer.output) if (isObject(item)) outputItemTexts(item, texts);
  }
  if (!Array.isArray(answer.choices)) return texts;
  for (const choice of answer.choices) {
    if (isObject(choice) && isObject(choice.message)) messageTexts(choice.message, texts);
  }
  return texts;
}

/** Response event types whose `delta` is generated text, and which of an item's texts it extends. */
const EVENT_DELTAS: Readonly<Record<string, string>> = {
  'response.output_text.delta': 'content',
  'response.refusal.delta': 'refusal',
  'response.function_call_arguments.delta': 'tool',
  'response.custom_tool_call_input.delta': 'tool',
};

/**
 * The text pieces of one stream chunk (`choices[].delta`; an Anthropic `content_block_delta`; a
 * Responses event's `delta`), each
 * keyed by where it belongs (a choice's content, one of its tool calls' arguments, a content block)
 * so pieces of one text can be joined.
 */
export function chunkPieces(chunk: unknown): { key: string; text: string }[] {
  const pieces: { key: string; text: string }[] = [];
  if (isObject(chunk) && chunk.type === 'content_block_delta' && isObject(chunk.delta)) {
    const { text, partial_json: json, thinking } = chunk.delta;
    const piece = text ?? json ?? thinking;
    if (typeof piece === 'string' && piece) pieces.push({ key: `block:${String(chunk.index)}`, text: piece });
    return pieces;
  }
  if (isObject(chunk) && typeof chunk.type === 'string') {
    // A Responses event (a native route): its delta, keyed by output item and part.
    const what = EVENT_DELTAS[chunk.type];
    if (what && typeof chunk.delta === 'string' && chunk.delta) {
      pieces.push({
        key: `${String(chunk.output_index)}:${what}:${String(chunk.content_index ?? 0)}`,
        text: chunk.delta,
      });
    }
    return pieces;
  }
  if (!isObject(chunk) || !Array.isArray(chunk.choices)) return pieces;
  chunk.choices.forEach((choice: unknown, i) => {
    if (!isObject(choice) || !isObject(choice.delta)) return;
    const at = typeof choice.index === 'number' ? choice.index : i;
    const { content, tool_calls: calls } = choice.delta;
    if (typeof content === 'string' && content) pieces.push({ key: `${at}:content`, text: content });
    if (!Array.isArray(calls)) return;
    calls.forEach((call: unknown, j) => {
      if (!isObject(call) || !isObject(call.function)) return;
      const args = call.function.arguments;
      const which = typeof call.index === 'number' ? call.index : j;
      if (typeof args === 'string' && args) pieces.push({ key: `${at}:tool:${which}`, text: args });
    });
  });
  return pieces;
}

function messageTexts(message: Json, texts: string[]): void {
  const { content } = message;
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (isObject(part) && typeof part.text === 'string') texts.push(part.text);
    }
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (isObject(call) && isObject(call.function) && typeof call.function.arguments === 'string') {
        texts.push(call.function.arguments);
      }
    }
  }
}

/** A Messages content block's text: a text block's, a tool call's input, a thinking block's. */
function blockTexts(block: Json, texts: string[]): void {
  if (typeof block.text === 'string') texts.push(block.text);
  if (typeof block.thinking === 'string') texts.push(block.thinking);
  if (block.type === 'tool_use' && block.input !== undefined) texts.push(JSON.stringify(block.input));
}

function outputItemTexts(item: Json, texts: string[]): void {
  for (const field of ['arguments', 'input'] as const) {
    if (typeof item[field] === 'string') texts.push(item[field]);
  }
  if (!Array.isArray(item.content)) return;
  for (const part of item.content) {
    if (!isObject(part)) continue;
    if (typeof part.text === 'string') texts.push(part.text);
    if (typeof part.refusal === 'string') texts.push(part.refusal);
  }
}

function stringsOf(value: unknown, texts: string[]): void {
  if (typeof value === 'string') texts.push(value);
  else if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'string') texts.push(item);
      else if (isObject(item) && typeof item.text === 'string') texts.push(item.text);
    }
  }
}
