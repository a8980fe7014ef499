import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.js';
import { meteredUsage } from '../../metering/usage.js';
import type { ChunkReading, StreamWriter } from '../../pipeline/inference-operation.js';
import { convertAnthropicStream } from '../../providers/anthropic/convert-anthropic-stream.js';
import { anthropicWireBody } from '../../providers/anthropic/wire-fixtures.test-support.js';
import type { ChatCompletionChunk } from '../../providers/chat-types.js';
import { convertOpenAIStream } from '../../providers/openai/convert-openai-stream.js';
import { convertResponsesStream } from '../../providers/openai/convert-responses-stream.js';
import {
  byteStream,
  collect,
  openAIWireBody,
  randomSplit,
  responsesWireBodies,
  seededRandom,
} from '../../providers/openai/wire-fixtures.test-support.js';
import type { ResponsesStreamEvent } from '../../providers/provider-adapter.js';
import { UpstreamError } from '../../providers/upstream-error.js';
import { parseEvents, readResponsesStream } from './responses-events.test-support.js';
import { type ResponsesChunk, responsesStreamWriter, type WriterContext } from './responses-stream-writer.js';

const served = {
  requestId: 'req_1',
  model: 'acme/chat',
  provider: 'p1',
  attempts: 1,
  requestedModel: 'acme/chat',
};
const gateway = { request_id: 'req_1', cost_micros: 42 };
const usage = meteredUsage({ promptTokens: 10, cachedTokens: 2, completionTokens: 5 });

function context(custom: string[] = []): WriterContext {
  let n = 0;
  return {
    wire: { model: 'acme/chat', input: 'hi' },
    tools: [],
    custom: new Set(custom),
    makeId: (prefix) => `${prefix}_${++n}`,
    responseId: 'resp_1',
    now: () => 1_700_000_000_000,
  };
}

/** Writes every chunk, then the end; the text and what the meter read. */
function run(
  writer: StreamWriter<ResponsesChunk>,
  chunks: readonly ResponsesChunk[],
  end: { finishReason?: string | null; error?: GatewayError | null } = {},
) {
  let text = '';
  const readings: ChunkReading[] = [];
  for (const chunk of chunks) {
    const written = writer.write(chunk);
    readings.push(written.reading);
    text += written.text;
  }
  const finishReason =
    end.finishReason === undefined
      ? (readings.findLast((r) => r.finishReason)?.finishReason ?? null)
      : end.finishReason;
  text += writer.end({ finishReason, usage, gateway, error: end.error ?? null, createdAt: 0 });
  return { text, readings };
}

const chatChunks = async (name: string, seed = 0) => {
  const body = openAIWireBody(name);
  const pieces = seed === 0 ? [body] : randomSplit(body, seededRandom(seed), 40);
  return collect(convertOpenAIStream(byteStream(pieces), () => {}));
};

const chunk = (
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finish: string | null = null,
): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

describe('responsesStreamWriter on a translated route (chat chunks in)', () => {
  it('a recorded text stream: created, in_progress, one message item, its deltas, done events, completed with gateway', async () => {
    const { text, readings } = run(
      responsesStreamWriter(context(), served),
      await chatChunks('openai-chat-stream-text-include-usage.chunks.txt'),
    );
    const read = readResponsesStream(text);
    expect(read.events.slice(0, 4).map((e) => e.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(read.events.slice(-4).map((e) => e.data.type)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(read.terminal).toMatchObject({
      id: 'resp_1',
      status: 'completed',
      model: 'acme/chat',
      completed_at: 1_700_000_000,
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 2 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 15,
      },
      gateway,
    });
    const [message] = read.terminal.output;
    expect(message.content[0].text).toMatch(/^\*\*Holiday Name:\*\* Harmony Day/);
    expect(read.streamed.get(message.id)).toBe(message.content[0].text);
    expect(readings.reduce((n, r) => n + r.chars, 0)).toBe(message.content[0].text.length);
  });

  it('recorded parallel tool calls: a function_call item each, the upstream ids as call_id, arguments.done for each', async () => {
    const { text } = run(
      responsesStreamWriter(context(), served),
      await chatChunks('openai-chat-stream-parallel-tool-calls-include-usage.sse'),
    );
    const read = readResponsesStream(text);
    expect(read.terminal.output).toEqual([
      {
        type: 'function_call',
        id: 'fc_1',
        status: 'completed',
        call_id: 'call_JMW1whyEaYG438VE1OIflxA2',
        name: 'GetWeatherArgs',
        arguments: '{"city": "Edinburgh", "country": "GB", "units": "c"}',
      },
      {
        type: 'function_call',
        id: 'fc_2',
        status: 'completed',
        call_id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou',
        name: 'get_stock_price',
        arguments: '{"ticker": "AAPL", "exchange": "NASDAQ"}',
      },
    ]);
    expect(read.events.filter((e) => e.data.type === 'response.function_call_arguments.done')).toHaveLength(
      2,
    );
    expect(read.events.some((e) => e.data.type === 'response.output_text.delta')).toBe(false);
  });

  it('the same events whatever byte boundaries the upstream stream arrived at', async () => {
    for (const name of [
      'openai-compatible-deepseek-stream-tool-call.chunks.txt',
      'openai-chat-stream-parallel-tool-calls-include-usage.sse',
    ]) {
      const whole = run(responsesStreamWriter(context(), served), await chatChunks(name)).text;
      for (let seed = 1; seed <= 10; seed++) {
        expect(run(responsesStreamWriter(context(), served), await chatChunks(name, seed)).text).toBe(whole);
      }
    }
  });

  it('a recorded Anthropic stream (text, then a tool use): the message item is done before the call is added', async () => {
    const bytes = new TextEncoder().encode(anthropicWireBody('anthropic-stream-text-then-tool-use.sse'));
    const chunks = await collect(convertAnthropicStream(byteStream([bytes]), 0).chunks);
    const read = readResponsesStream(run(responsesStreamWriter(context(), served), chunks).text);
    expect(read.terminal.output.map((item: { type: string }) => item.type)).toEqual([
      'message',
      'function_call',
    ]);
    const types = read.events.map((e) => e.data.type);
    expect(types.indexOf('response.output_item.done')).toBeLessThan(
      types.lastIndexOf('response.output_item.added'),
    );
    expect(read.terminal.output[1]).toMatchObject({ name: 'get_weather', status: 'completed' });
  });

  it('a custom tool’s call is one custom_tool_call item, its input told whole at the end', () => {
    const chunks = [
      chunk({
        role: 'assistant',
        tool_calls: [
          { index: 0, id: 'call_p', type: 'function', function: { name: 'apply_patch', arguments: '' } },
        ],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"input":"*** Begin' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: ' Patch\\n"}' } }] }),
      chunk({}, 'tool_calls'),
    ];
    const read = readResponsesStream(
      run(responsesStreamWriter(context(['apply_patch']), served), chunks).text,
    );
    expect(read.terminal.output).toEqual([
      {
        type: 'custom_tool_call',
        id: 'ctc_1',
        status: 'completed',
        call_id: 'call_p',
        name: 'apply_patch',
        input: '*** Begin Patch\n',
      },
    ]);
    expect(read.events.map((e) => e.data.type).slice(2)).toEqual([
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('a stream cut at the output ceiling ends in response.incomplete, its items incomplete', () => {
    const read = readResponsesStream(
      run(responsesStreamWriter(context(), served), [chunk({ content: 'Hel' }), chunk({}, 'length')]).text,
    );
    expect(read.events.at(-1)?.event).toBe('response.incomplete');
    expect(read.terminal).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      completed_at: null,
      gateway,
    });
    expect(read.terminal.output[0].status).toBe('incomplete');
  });

  it('a break ends in response.failed with the code, the items so far cut short and no done events for them', () => {
    const error = new GatewayError('upstream_error', 'The provider stream broke: connection reset');
    error.cause = new UpstreamError('network', 'connection reset');
    const read = readResponsesStream(
      run(responsesStreamWriter(context(), served), [chunk({ content: 'Hel' })], { error }).text,
    );
    expect(read.events.map((e) => e.data.type).slice(-2)).toEqual([
      'response.output_text.delta',
      'response.failed',
    ]);
    expect(read.terminal).toMatchObject({
      status: 'failed',
      error: { code: 'server_error', message: 'The provider stream broke: connection reset' },
      output: [{ type: 'message', status: 'incomplete' }],
      gateway,
    });
  });

  it('a stream that ended before any chunk still starts and ends', () => {
    const read = readResponsesStream(run(responsesStreamWriter(context(), served), []).text);
    expect(read.events.map((e) => e.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.completed',
    ]);
  });
});

describe('responsesStreamWriter on a native route (the upstream’s events in)', () => {
  const nativeEvents = async (body: Uint8Array) => {
    const events: ResponsesStreamEvent[] = [];
    try {
      for await (const event of convertResponsesStream(byteStream([body]), () => {})) events.push(event);
    } catch {}
    return events;
  };

  it('recorded streams pass through as sent; the terminal event waits for the end and gains response.gateway', async () => {
    for (const body of responsesWireBodies('openai-responses-reasoning-tool-loop.chunks.txt')) {
      const events = await nativeEvents(body);
      const writer = responsesStreamWriter(context(), served);
      const written = events.map((event) => writer.write(event));
      expect(written.at(-1)?.text).toBe('');
      const text =
        written.map((w) => w.text).join('') +
        writer.end({ finishReason: 'stop', usage, gateway, error: null, createdAt: 0 });
      const read = readResponsesStream(text);
      expect(read.events.map((e) => e.data)).toEqual(
        events.map((event, i) =>
          i === events.length - 1
            ? { ...event, response: { ...(event.response as object), gateway } }
            : event,
        ),
      );
      expect(written.at(-1)?.reading.finishReason).toMatch(/^(tool_calls|stop)$/);
    }
  });

  it('a native stream that breaks goes on numbering into response.failed, with the upstream’s code', async () => {
    const [body] = responsesWireBodies('openai-responses-error-insufficient-quota.chunks.txt');
    const events = await nativeEvents(body!);
    const error = new GatewayError(
      'upstream_error',
      'The provider stream broke: You exceeded your current quota.',
    );
    error.cause = new UpstreamError(
      'network',
      'You exceeded your current quota.',
      null,
      null,
      'insufficient_quota',
    );
    const text = run(responsesStreamWriter(context(), served), events, { error }).text;
    const read = readResponsesStream(text);
    expect(read.events.map((e) => e.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.failed',
    ]);
    expect(read.terminal).toMatchObject({
      id: 'resp_05500b38c2cd9bfc00691c7c9d222481a3b595421266dab424',
      status: 'failed',
      error: { code: 'insufficient_quota' },
      gateway,
    });
  });

  it('meters a native stream from its deltas', async () => {
    const [, , , text] = responsesWireBodies('openai-responses-reasoning-tool-loop.chunks.txt');
    const events = await nativeEvents(text!);
    const { readings } = run(responsesStreamWriter(context(), served), events);
    expect(readings.reduce((n, r) => n + r.chars, 0)).toBe('The final result is **570**.'.length);
    expect(readings.some((r) => r.produced)).toBe(true);
    expect(parseEvents(run(responsesStreamWriter(context(), served), events).text)).toHaveLength(
      events.length,
    );
  });
});
