import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../metering/estimate-worst-case.js';
import type { ChatMessage } from '../../providers/chat-types.js';
import { middleOut } from './middle-out.js';

// Every message carries its index, so a result reads back as the indexes it kept; each is long
// enough that dropping any one message lowers the estimate.
const system = (i: number): ChatMessage => ({ role: 'system', content: `system ${i}` });
const user = (i: number): ChatMessage => ({ role: 'user', content: `user ${i}` });
const assistant = (i: number): ChatMessage => ({ role: 'assistant', content: `assistant ${i}` });
const calls = (i: number, ...ids: string[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: `tool${i}`, arguments: '{}' } })),
});
const answer = (i: number, id: string): ChatMessage => ({
  role: 'tool',
  tool_call_id: id,
  content: `result ${i}`,
});

/** The pre-flight's prompt estimate. */
const tokens = (messages: readonly ChatMessage[]) => estimateTokens(JSON.stringify(messages));
const pick = (messages: readonly ChatMessage[], indexes: readonly number[]) =>
  indexes.map((i) => messages[i]!);
const indexesOf = (all: readonly ChatMessage[], kept: readonly ChatMessage[]) =>
  kept.map((m) => all.indexOf(m));
const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') for (const inner of Object.values(value)) deepFreeze(inner);
  return Object.freeze(value);
};
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => from + k);

// s0 u1 | a2 u3 a4 u5 a6 | u7: five droppable messages, centre a4.
const odd = [system(0), user(1), assistant(2), user(3), assistant(4), user(5), assistant(6), user(7)];
// s0 u1 | a2 u3 a4 u5 | a6: four droppable messages, centre between u3 and a4.
const even = [system(0), user(1), assistant(2), user(3), assistant(4), user(5), assistant(6)];
const manySystems = [system(0), system(1), system(2), user(3), assistant(4), user(5), assistant(6), user(7)];
const midSystem = [system(0), user(1), system(2), assistant(3), user(4)];
// s0 u1 | [a2 t3 t4] u5 a6 | u7
const toolsEarly = [
  system(0),
  user(1),
  calls(2, 'c1', 'c2'),
  answer(3, 'c1'),
  answer(4, 'c2'),
  user(5),
  assistant(6),
  user(7),
];
// s0 u1 | a2 [a3 t4 t5] u6 a7 | u8
const toolsCentre = [
  system(0),
  user(1),
  assistant(2),
  calls(3, 'x', 'y'),
  answer(4, 'x'),
  answer(5, 'y'),
  user(6),
  assistant(7),
  user(8),
];
// s0 u1 | a2 u3 | [a4 t5]: the last message answers a call, so its whole unit stays.
const toolsLast = [system(0), user(1), assistant(2), user(3), calls(4, 'z'), answer(5, 'z')];
// s0 [a1 t2] | u3 a4 | u5: the first non-system message calls a tool, so its whole unit stays.
const toolsFirst = [system(0), calls(1, 'w'), answer(2, 'w'), user(3), assistant(4), user(5)];
// s0 u1 | a2 t3 u4 | a5: t3 answers no call of a2 (another id), so each is a unit of its own.
const orphanTool = [system(0), user(1), calls(2, 'p'), answer(3, 'q'), user(4), assistant(5)];

interface Case {
  name: string;
  messages: ChatMessage[];
  maxTokens: number | null;
  /** The context length; by default exactly what the expected survivors need with `maxTokens`. */
  contextLength?: number;
  keep: number[];
}

const cases: Case[] = [
  {
    name: 'fits already: nothing dropped',
    messages: odd,
    maxTokens: 10,
    contextLength: 100_000,
    keep: range(0, 8),
  },
  {
    name: 'fits exactly at the context length: nothing dropped',
    messages: odd,
    maxTokens: 10,
    keep: range(0, 8),
  },
  { name: 'odd count: the centre goes first', messages: odd, maxTokens: 10, keep: [0, 1, 2, 3, 5, 6, 7] },
  { name: 'odd count: then the older side', messages: odd, maxTokens: 10, keep: [0, 1, 2, 5, 6, 7] },
  { name: 'odd count: then the newer side', messages: odd, maxTokens: 10, keep: [0, 1, 2, 6, 7] },
  { name: 'odd count: alternating outward', messages: odd, maxTokens: 10, keep: [0, 1, 6, 7] },
  { name: 'odd count: down to the kept ones', messages: odd, maxTokens: 10, keep: [0, 1, 7] },
  {
    name: 'even count: the older of the two centres first',
    messages: even,
    maxTokens: 0,
    keep: [0, 1, 2, 4, 5, 6],
  },
  { name: 'even count: then the newer centre', messages: even, maxTokens: 0, keep: [0, 1, 2, 5, 6] },
  { name: 'even count: then the older side', messages: even, maxTokens: 0, keep: [0, 1, 5, 6] },
  { name: 'even count: then the newer side', messages: even, maxTokens: 0, keep: [0, 1, 6] },
  {
    name: 'every leading system message, the first other message and the last stay',
    messages: manySystems,
    maxTokens: 10,
    contextLength: 0,
    keep: [0, 1, 2, 3, 7],
  },
  {
    name: 'a system message past the first user one is droppable',
    messages: midSystem,
    maxTokens: 0,
    keep: [0, 1, 3, 4],
  },
  {
    name: 'max_tokens null: the prompt alone must fit',
    messages: odd,
    maxTokens: null,
    contextLength: tokens(odd),
    keep: range(0, 8),
  },
  {
    name: 'max_tokens set: the same prompt no longer fits beside it',
    messages: odd,
    maxTokens: 1,
    contextLength: tokens(odd),
    keep: [0, 1, 2, 3, 5, 6, 7],
  },
  {
    name: 'a tool_calls unit counts as one unit in the order',
    messages: toolsEarly,
    maxTokens: 5,
    keep: [0, 1, 2, 3, 4, 6, 7],
  },
  {
    name: 'a tool_calls message goes with all its tool answers',
    messages: toolsEarly,
    maxTokens: 5,
    keep: [0, 1, 6, 7],
  },
  {
    name: 'a tool_calls unit at the centre goes whole even when dropping the call alone would fit',
    messages: toolsCentre,
    maxTokens: 5,
    contextLength: tokens(pick(toolsCentre, [0, 1, 2, 4, 5, 6, 7, 8])) + 5,
    keep: [0, 1, 2, 6, 7, 8],
  },
  {
    name: 'the last message answering a tool call keeps its whole unit',
    messages: toolsLast,
    maxTokens: 5,
    contextLength: 0,
    keep: [0, 1, 4, 5],
  },
  {
    name: 'the first non-system message calling a tool keeps its whole unit',
    messages: toolsFirst,
    maxTokens: 5,
    contextLength: 0,
    keep: [0, 1, 2, 5],
  },
  {
    name: 'a tool message answering another id is not tied to the call before it',
    messages: orphanTool,
    maxTokens: 0,
    keep: [0, 1, 2, 4, 5],
  },
  {
    name: 'cannot fit: everything droppable goes',
    messages: odd,
    maxTokens: 10,
    contextLength: 0,
    keep: [0, 1, 7],
  },
  {
    name: 'a lone message that cannot fit is kept',
    messages: [user(0)],
    maxTokens: 10,
    contextLength: 0,
    keep: [0],
  },
  { name: 'no messages: nothing to drop', messages: [], maxTokens: 10, contextLength: 0, keep: [] },
];

describe('middleOut', () => {
  it.each(cases)('$name', ({ messages, maxTokens, contextLength, keep }) => {
    const limit = contextLength ?? tokens(pick(messages, keep)) + (maxTokens ?? 0);
    const result = middleOut(messages, { contextLength: limit, maxTokens });
    expect(indexesOf(messages, result.messages)).toEqual(keep);
    expect(result.droppedMessages).toBe(messages.length - keep.length);
  });

  it('what is left fits the pre-flight estimate, which counts each non-ASCII unit as a token', () => {
    const messages = [
      user(0),
      { role: 'assistant' as const, content: '漢'.repeat(200) },
      user(2),
      assistant(3),
      user(4),
    ];
    const limits = { contextLength: 150, maxTokens: 10 };
    // Plain ⌈characters / 4⌉ would keep everything; the pre-flight's measure does not.
    expect(Math.ceil(JSON.stringify(messages).length / 4) + 10).toBeLessThanOrEqual(150);
    const result = middleOut(messages, limits);
    expect(indexesOf(messages, result.messages)).toEqual([0, 3, 4]);
    expect(result.droppedMessages).toBe(2);
    expect(tokens(result.messages) + 10).toBeLessThanOrEqual(150);
  });

  it('does not mutate its input', () => {
    const messages = deepFreeze(structuredClone(toolsCentre));
    const before = structuredClone(messages);
    const result = middleOut(messages, { contextLength: 0, maxTokens: 10 });
    expect(result.droppedMessages).toBe(6);
    expect(messages).toEqual(before);
    expect(result.messages).not.toBe(messages);
    expect(middleOut(messages, { contextLength: 100_000, maxTokens: 10 }).messages).not.toBe(messages);
  });

  it('trims a 5,000-message conversation to a head and a tail around a dropped middle', () => {
    const messages: ChatMessage[] = [system(0)];
    for (let i = 1; i < 5_000; i++) {
      if (i % 5 === 3) messages.push(calls(i, `call${i}`));
      else if (i % 5 === 4) messages.push(answer(i, `call${i - 1}`));
      else messages.push(i % 2 ? user(i) : assistant(i));
    }
    const limits = { contextLength: Math.floor(tokens(messages) / 3), maxTokens: 1_000 };
    const result = middleOut(messages, limits);
    const kept = indexesOf(messages, result.messages);
    // One dropped block around the middle, never splitting a call from its answer.
    const gap = kept.findIndex((index, k) => kept[k + 1] !== undefined && kept[k + 1] !== index + 1);
    const [lastHead, firstTail] = [kept[gap]!, kept[gap + 1]!];
    expect(kept).toEqual([...range(0, lastHead + 1), ...range(firstTail, 5_000)]);
    expect(lastHead).toBeLessThan(2_500);
    expect(firstTail).toBeGreaterThan(2_500);
    expect(messages[firstTail]!.role).not.toBe('tool');
    expect(messages[lastHead]!.tool_calls).toBeUndefined();
    expect(result.droppedMessages).toBe(5_000 - kept.length);
    expect(tokens(result.messages) + 1_000).toBeLessThanOrEqual(limits.contextLength);
  });
});
