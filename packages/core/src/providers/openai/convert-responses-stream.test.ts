import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../chat-types.js';
import type { ResponsesStreamEvent } from '../provider-adapter.js';
import { UpstreamError } from '../upstream-error.js';
import { convertResponsesStream, convertResponsesUsage } from './convert-responses-stream.js';
import { byteStream, randomSplit, responsesWireBodies, seededRandom } from './wire-fixtures.test-support.js';

interface Replayed {
  events: ResponsesStreamEvent[];
  usage: TokenUsage | null;
  error: unknown;
}

async function replay(pieces: readonly Uint8Array[]): Promise<Replayed> {
  const out: Replayed = { events: [], usage: null, error: undefined };
  const events = convertResponsesStream(byteStream(pieces), (usage) => {
    out.usage = usage;
  });
  try {
    for await (const event of events) out.events.push(event);
  } catch (error) {
    out.error = error;
  }
  return out;
}

/** The JSON lines of a stream body (what the upstream sent), in order. */
function sent(body: Uint8Array): Record<string, unknown>[] {
  return new TextDecoder()
    .decode(body)
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => JSON.parse(line.slice('data:'.length)));
}

const usage = (promptTokens: number, cachedTokens: number, completionTokens: number): TokenUsage => ({
  promptTokens,
  cachedTokens,
  cacheWriteTokens: 0,
  completionTokens,
});

const [reasoningCall, secondCall, , textStream] = responsesWireBodies(
  'openai-responses-reasoning-tool-loop.chunks.txt',
);
const [customCall] = responsesWireBodies('openai-responses-custom-tool-call.chunks.txt');
const [incomplete] = responsesWireBodies('openai-responses-incomplete-max-output-tokens.sse');
const [quotaError] = responsesWireBodies('openai-responses-error-insufficient-quota.chunks.txt');

const COMPLETE = [
  { name: 'reasoning, then a function call', body: reasoningCall!, events: 56, usage: usage(134, 0, 28) },
  { name: 'a function call alone', body: secondCall!, events: 19, usage: usage(221, 0, 26) },
  { name: 'a text message', body: textStream!, events: 16, usage: usage(299, 0, 12) },
  { name: 'a custom tool call', body: customCall!, events: 28, usage: usage(93, 0, 51) },
  { name: 'a stream cut at max_output_tokens', body: incomplete!, events: 9, usage: usage(0, 0, 0) },
];

describe('convertResponsesStream on recorded Responses streams', () => {
  it.each(COMPLETE)('$name: every event as sent, the terminal one last, its usage', async (recording) => {
    const out = await replay([recording.body]);
    expect(out.error).toBeUndefined();
    expect(out.events).toEqual(sent(recording.body));
    expect(out.events).toHaveLength(recording.events);
    expect(out.events.at(-1)?.type).toMatch(/^response\.(completed|incomplete)$/);
    expect(out.usage).toEqual(recording.usage);
  });

  it.each(COMPLETE)('$name: the same when the bytes arrive cut at random places', async (recording) => {
    const whole = await replay([recording.body]);
    for (let seed = 1; seed <= 20; seed++) {
      const split = await replay(randomSplit(recording.body, seededRandom(seed), 1 + seed * 7));
      expect(split).toEqual(whole);
    }
  });

  it('an error event breaks the stream with the upstream code after the events before it', async () => {
    const out = await replay([quotaError!]);
    expect(out.events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress']);
    expect(out.error).toBeInstanceOf(UpstreamError);
    expect(out.error).toMatchObject({ kind: 'network', code: 'insufficient_quota' });
    expect((out.error as Error).message).toMatch(/^You exceeded your current quota/);
    expect(out.usage).toBeNull();
  });

  it('response.failed alone breaks it with the code of response.error', async () => {
    const body = new TextEncoder().encode(
      'event: response.failed\ndata: {"type":"response.failed","sequence_number":0,"response":{"status":"failed","error":{"code":"rate_limit_exceeded","message":"Rate limit reached. Please try again in 20s."}}}\n\n',
    );
    const out = await replay([body]);
    expect(out.error).toMatchObject({
      code: 'rate_limit_exceeded',
      message: 'Rate limit reached. Please try again in 20s.',
    });
  });

  it.each([
    ['ends before the terminal event', (b: Uint8Array) => b.subarray(0, b.length - 200)],
    ['sends [DONE] before the terminal event', () => new TextEncoder().encode('data: [DONE]\n\n')],
    ['sends a data line that is not a JSON event', () => new TextEncoder().encode('data: {"oops\n\n')],
  ])('a stream that %s is broken', async (_, cut) => {
    const out = await replay([cut(textStream!)]);
    expect(out.error).toBeInstanceOf(UpstreamError);
    expect(out.usage).toBeNull();
  });
});

describe('convertResponsesUsage', () => {
  it.each([
    [{ input_tokens: 10, output_tokens: 5 }, usage(10, 0, 5)],
    [{ input_tokens: 10, input_tokens_details: { cached_tokens: 4 }, output_tokens: 5 }, usage(10, 4, 5)],
    [{ input_tokens: 10, input_tokens_details: { cached_tokens: 40 }, output_tokens: 5 }, usage(10, 10, 5)],
    [{ input_tokens: 10, input_tokens_details: null, output_tokens: 0 }, usage(10, 0, 0)],
    [{ input_tokens: 1.5, output_tokens: 5 }, null],
    [{ input_tokens: 10 }, null],
    [null, null],
    ['usage', null],
  ])('%j → %j', (raw, expected) => {
    expect(convertResponsesUsage(raw)).toEqual(expected);
  });
});
