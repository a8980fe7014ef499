import { countCharacters, tokensOf } from '../../metering/estimate-worst-case.js';
import type { ChatMessage } from '../../providers/chat-types.js';

/** What the middle-out transform left of a conversation, and how many messages it dropped. */
interface MiddleOutResult {
  messages: ChatMessage[];
  droppedMessages: number;
}

/** The window a conversation must fit: the model's `context_length` and the request's `max_tokens`. */
interface MiddleOutLimits {
  contextLength: number;
  /** The completion the request asks room for; `null` when unset, so the prompt alone must fit. */
  maxTokens: number | null;
}

/**
 * The `middle-out` transform (product.md): while the prompt estimate plus `max_tokens` exceeds the
 * context length, drops whole messages nearest the middle first, moving outward and alternating
 * sides (the older side first on a tie). The leading system (or developer) messages, the first
 * other message and the last message always stay. An assistant `tool_calls` message and the `tool`
 * answers right after it are one unit, dropped or kept together; a unit holding a kept message stays.
 *
 * The prompt is measured as the pre-flight measures it (`estimateTokens` over
 * `JSON.stringify(messages)`), so it counts ⌈ASCII characters / 4⌉ plus one token per non-ASCII
 * UTF-16 unit rather than product.md's plain ⌈characters / 4⌉. What is left then fits the
 * pre-flight's own estimate. When even the undroppable messages do not fit, they are returned
 * anyway for the pre-flight or the provider to refuse. Does not mutate its input; O(characters).
 */
export function middleOut(messages: readonly ChatMessage[], limits: MiddleOutLimits): MiddleOutResult {
  const budget = limits.contextLength - (limits.maxTokens ?? 0);
  const units = groupUnits(messages);
  // `JSON.stringify` of an array is `[`, the messages joined by `,`, then `]`: all ASCII.
  let ascii = 2 + Math.max(messages.length - 1, 0);
  let other = 0;
  for (const unit of units) {
    ascii += unit.ascii;
    other += unit.other;
  }
  const fits = () => tokensOf(ascii, other) <= budget;
  if (fits()) return { messages: [...messages], droppedMessages: 0 };

  const dropped = new Array<boolean>(messages.length).fill(false);
  let droppedMessages = 0;
  for (const unit of dropOrder(units, protectedIndexes(messages))) {
    for (let i = unit.start; i < unit.end; i++) dropped[i] = true;
    const count = unit.end - unit.start;
    droppedMessages += count;
    // The last message always stays, so every dropped message takes one separating comma with it.
    ascii -= unit.ascii + count;
    other -= unit.other;
    if (fits()) break;
  }
  return { messages: messages.filter((_, i) => !dropped[i]), droppedMessages };
}

/** Consecutive messages `[start, end)` dropped or kept together, with their serialised measure. */
interface Unit {
  start: number;
  end: number;
  ascii: number;
  other: number;
}

/**
 * Splits a conversation into units: an assistant message with `tool_calls` together with the
 * consecutive `tool` messages after it that answer one of its calls; every other message alone.
 */
function groupUnits(messages: readonly ChatMessage[]): Unit[] {
  const units: Unit[] = [];
  let i = 0;
  while (i < messages.length) {
    const start = i;
    const head = messages[i]!;
    // The body is only shallowly validated: a malformed `tool_calls` ties nothing to the message.
    const ids = new Set(
      head.role === 'assistant' && Array.isArray(head.tool_calls)
        ? head.tool_calls.map((call) => call?.id)
        : [],
    );
    i++;
    while (i < messages.length && messages[i]!.role === 'tool' && ids.has(messages[i]!.tool_call_id ?? '')) {
      i++;
    }
    let ascii = 0;
    let other = 0;
    for (let j = start; j < i; j++) {
      const measure = measureMessage(messages[j]!);
      ascii += measure.ascii;
      other += measure.other;
    }
    units.push({ start, end: i, ascii, other });
  }
  return units;
}

/** A message's serialised ASCII characters and other UTF-16 units, as the pre-flight counts them. */
function measureMessage(message: ChatMessage): { ascii: number; other: number } {
  return countCharacters(JSON.stringify(message));
}

/** The messages that always stay: the leading system messages, the first other one and the last. */
function protectedIndexes(messages: readonly ChatMessage[]): Set<number> {
  const kept = new Set<number>();
  let i = 0;
  while (i < messages.length && isSystem(messages[i]!)) kept.add(i++);
  if (i < messages.length) kept.add(i);
  if (messages.length > 0) kept.add(messages.length - 1);
  return kept;
}

function isSystem(message: ChatMessage): boolean {
  return message.role === 'system' || message.role === 'developer';
}

/**
 * The droppable units in the order they go: by distance from the centre of the droppable ones,
 * the older first on a tie, which alternates sides moving outward.
 */
function dropOrder(units: readonly Unit[], kept: ReadonlySet<number>): Unit[] {
  const droppable = units.filter((unit) => {
    for (let i = unit.start; i < unit.end; i++) if (kept.has(i)) return false;
    return true;
  });
  const order: Unit[] = [];
  const m = droppable.length;
  // For an odd count the centre unit goes first; then older, newer, older, … outward.
  let left = Math.ceil(m / 2) - 1;
  let right = Math.floor(m / 2);
  if (left === right) {
    order.push(droppable[left]!);
    left--;
    right++;
  }
  while (left >= 0 || right < m) {
    if (left >= 0) order.push(droppable[left--]!);
    if (right < m) order.push(droppable[right++]!);
  }
  return order;
}
