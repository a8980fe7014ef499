import { describe, expect, it } from 'vitest';
import { bytes, fakeHttp } from '../openai/fake-http-client.test-support.js';
import type { AnthropicEvent, MessagesPassThrough, UpstreamTarget } from '../provider-adapter.js';
import { UpstreamError } from '../upstream-error.js';
import { anthropicDialect } from './anthropic-dialect.js';
import { ANTHROPIC_VERSION } from './anthropic-headers.js';
import { anthropicMessages, passThroughStream, receivedSseText } from './anthropic-messages.js';
import {
  anthropicSse,
  anthropicWireBody,
  bytesSplitAt,
  collect,
  messageStartEvent,
  randomOffsets,
  readWireFixture,
  seededRandom,
} from './wire-fixtures.test-support.js';

const target: UpstreamTarget = {
  provider: {
    id: 'anthropic',
    format: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    apiKey: 'sk-ant-upstream',
    headers: {},
    timeoutMs: null,
    streamIdleTimeoutMs: 60_000,
  },
  upstreamModel: 'claude-sonnet-4-5-20250929',
  maxOutputTokens: 0,
};

/** A Claude Code-shaped body: cache markers with ttl on system, message and tool blocks, a signed thinking block. */
const body = {
  model: 'anthropic/claude-sonnet-4-5',
  max_tokens: 32000,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: 'text', text: 'Project rules…', cache_control: { type: 'ephemeral', ttl: '1h' } },
  ],
  messages: [
    {
      role: 'user',
      content: [{ type: 'text', text: 'list the files', cache_control: { type: 'ephemeral' } }],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run ls.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
        { type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'ls' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01',
          content: 'a.txt\nb.txt',
          cache_control: { type: 'ephemeral', ttl: '5m' },
        },
      ],
    },
  ],
  tools: [
    {
      name: 'Bash',
      description: 'Run a command',
      input_schema: { type: 'object', properties: { command: { type: 'string' } } },
      cache_control: { type: 'ephemeral' },
    },
  ],
  thinking: { type: 'enabled', budget_tokens: 4000 },
  metadata: { user_id: 'user_abc' },
  stream: false,
};

const passThrough = (overrides: Partial<MessagesPassThrough> = {}): MessagesPassThrough => ({
  body,
  version: '2023-06-01',
  beta: 'claude-code-20250219,interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14',
  ...overrides,
});

const channel = (http: ReturnType<typeof fakeHttp>['http']) => ({
  http,
  dialect: anthropicDialect,
  now: () => 0,
});
const signal = () => new AbortController().signal;

describe('anthropicMessages - the request passed through', () => {
  it('sends the body as it came but for model, and the caller’s anthropic-version and anthropic-beta', async () => {
    const fake = fakeHttp({
      status: 200,
      pieces: [bytes(readWireFixture('anthropic-message-tool-use.json'))],
    });
    await anthropicMessages(channel(fake.http)).complete(passThrough(), target, { signal: signal() });
    const { url, init } = fake.calls[0]!;
    expect(url).toBe('https://api.anthropic.com/v1/messages');
    expect(init.body).toBe(JSON.stringify({ ...body, model: 'claude-sonnet-4-5-20250929' }));
    expect(init.headers).toEqual({
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': passThrough().beta,
      'x-api-key': 'sk-ant-upstream',
    });
  });

  it('sends the provider’s default anthropic-version only when the caller sent none, and no beta it did not send', async () => {
    const fake = fakeHttp({
      status: 200,
      pieces: [bytes(readWireFixture('anthropic-message-tool-use.json'))],
    });
    await anthropicMessages(channel(fake.http)).complete(passThrough({ version: null, beta: null }), target, {
      signal: signal(),
    });
    expect(fake.calls[0]!.init.headers['anthropic-version']).toBe(ANTHROPIC_VERSION);
    expect(fake.calls[0]!.init.headers).not.toHaveProperty('anthropic-beta');
  });

  it('answers the JSON exactly as parsed, with its usage as the gateway counts it', async () => {
    const text = readWireFixture('anthropic-message-text-and-tool-use-no-args.json');
    const fake = fakeHttp({ status: 200, pieces: [bytes(text)] });
    const answer = await anthropicMessages(channel(fake.http)).complete(passThrough(), target, {
      signal: signal(),
    });
    expect(answer.json).toEqual(JSON.parse(text));
    const usage = JSON.parse(text).usage;
    expect(answer.usage).toEqual({
      promptTokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
      cachedTokens: usage.cache_read_input_tokens,
      cacheWriteTokens: usage.cache_creation_input_tokens,
      completionTokens: usage.output_tokens,
    });
  });

  it('a non-2xx is an UpstreamError with Anthropic’s message and status (a 529 is retried by the walk)', async () => {
    const fake = fakeHttp({
      status: 529,
      pieces: [bytes('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')],
    });
    const error = await anthropicMessages(channel(fake.http))
      .complete(passThrough(), target, { signal: signal() })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'http', status: 529, message: 'Overloaded' });
  });

  it('count_tokens: POSTs /messages/count_tokens without max_tokens and stream, and reads input_tokens', async () => {
    const fake = fakeHttp({ status: 200, pieces: [bytes('{"input_tokens":2095}')] });
    const count = await anthropicMessages(channel(fake.http)).countTokens(passThrough(), target, {
      signal: signal(),
    });
    expect(count).toBe(2095);
    const { url, init } = fake.calls[0]!;
    expect(url).toBe('https://api.anthropic.com/v1/messages/count_tokens');
    const { max_tokens: _m, stream: _s, ...rest } = body;
    expect(init.body).toBe(JSON.stringify({ ...rest, model: 'claude-sonnet-4-5-20250929' }));
    expect(init.headers['anthropic-beta']).toBe(passThrough().beta);
  });
});

const STREAMS = [
  'anthropic-stream-text-then-tool-use.sse',
  'anthropic-stream-cache-read.chunks.txt',
  'anthropic-stream-cache-write.chunks.txt',
  'anthropic-stream-text-then-tool-use.chunks.txt',
  'anthropic-stream-tool-use-no-args.chunks.txt',
];

/** The events of a wire body, each as the text it is on the wire (a last one without its blank line completed). */
function wireEvents(wire: string): string[] {
  return wire
    .trimEnd()
    .split('\n\n')
    .map((event) => `${event}\n\n`);
}

describe('passThroughStream - recorded streams, re-chunked at random byte boundaries', () => {
  it.each(STREAMS)('%s: hands on every event exactly as it came, in order', async (name) => {
    const wire = anthropicWireBody(name);
    const random = seededRandom(name.length);
    for (let run = 0; run < 20; run++) {
      const stream = passThroughStream(bytesSplitAt(wire, randomOffsets(random, wire.length, 1 + run * 3)));
      const events = await collect(stream.chunks);
      expect(events.map((event) => receivedSseText(event))).toEqual(wireEvents(wire));
      expect(events.at(-1)?.type).toBe('message_stop');
    }
  });

  it('reads usage from message_start and message_delta, the later counts winning (cache read)', async () => {
    const stream = passThroughStream(
      bytesSplitAt(anthropicWireBody('anthropic-stream-cache-read.chunks.txt'), []),
    );
    await collect(stream.chunks);
    const usage = stream.usage()!;
    expect(usage.cachedTokens).toBe(18639);
    expect(usage.cacheWriteTokens).toBe(0);
    expect(usage.promptTokens).toBeGreaterThan(18639);
    expect(usage.completionTokens).toBeGreaterThan(0);
  });

  it('reads cache writes (cache write)', async () => {
    const stream = passThroughStream(
      bytesSplitAt(anthropicWireBody('anthropic-stream-cache-write.chunks.txt'), []),
    );
    await collect(stream.chunks);
    expect(stream.usage()).toMatchObject({ cacheWriteTokens: 18639, cachedTokens: 0 });
  });
});

describe('passThroughStream - errors', () => {
  const drain = async (events: object[]) => {
    const seen: AnthropicEvent[] = [];
    const stream = passThroughStream(bytesSplitAt(anthropicSse(events), []));
    try {
      for await (const event of stream.chunks) seen.push(event);
    } catch (error) {
      return { seen, error };
    }
    return { seen, error: null };
  };

  it('an error event before message_start fails the attempt with its status, so the walk retries a 529', async () => {
    const { seen, error } = await drain([
      { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    ]);
    expect(seen).toEqual([]);
    expect(error).toMatchObject({ kind: 'http', status: 529 });
  });

  it('an error event after message_start is handed on as it is, then the stream breaks', async () => {
    const errorEvent = { type: 'error', error: { type: 'api_error', message: 'Internal server error' } };
    const { seen, error } = await drain([messageStartEvent(), errorEvent]);
    expect(seen.map((e) => e.type)).toEqual(['message_start', 'error']);
    expect(receivedSseText(seen[1]!)).toBe(`event: error\ndata: ${JSON.stringify(errorEvent)}\n\n`);
    expect(error).toMatchObject({ kind: 'network' });
  });

  it('a stream that ends before message_stop is broken', async () => {
    const { error } = await drain([messageStartEvent()]);
    expect(error).toMatchObject({ kind: 'network', message: 'anthropic: stream ended before message_stop' });
  });

  it('data that is not a JSON event breaks the stream', async () => {
    const stream = passThroughStream(bytesSplitAt('event: message_start\ndata: {oops\n\n', []));
    await expect(collect(stream.chunks)).rejects.toMatchObject({ kind: 'network' });
  });
});
