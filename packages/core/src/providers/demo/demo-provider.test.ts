import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../../catalogue/catalogue.js';
import { ConfigError, parseGatewayConfig } from '../../catalogue/config-schema.js';
import type { ChatCompletionChunk, ChatRequest, ChatTool } from '../chat-types.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { createProviderRegistry } from '../provider-registry.js';
import { createDemoProvider } from './demo-provider.js';

const NOW = Date.UTC(2026, 0, 2, 3, 4, 5);
const demo = createDemoProvider({ now: () => NOW });
const target: UpstreamTarget = {
  provider: {
    id: 'demo',
    format: 'demo',
    baseUrl: '',
    apiKey: null,
    headers: {},
    timeoutMs: null,
    streamIdleTimeoutMs: 60_000,
  },
  upstreamModel: 'chat-small',
  maxOutputTokens: 4096,
};
const call = () => ({ signal: new AbortController().signal });

const SECRET = 'my secret plan is to buy 42 llamas';
const request: ChatRequest = {
  model: 'demo/chat-small',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: [{ type: 'text', text: SECRET }] },
  ],
};
/** ⌈characters / 4⌉ of the two messages' text. */
const PROMPT_TOKENS = Math.ceil(('Be brief.'.length + SECRET.length) / 4);

const weather: ChatTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 1 },
        note: { type: 'string' },
      },
      required: ['city', 'unit', 'days'],
    },
  },
};
const time: ChatTool = { type: 'function', function: { name: 'get_time' } };

async function collect(chunks: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const chunk of chunks) out.push(chunk);
  return out;
}

describe('demo provider: complete', () => {
  it('answers with a fixed text naming the model and the message count, never the prompt', async () => {
    const { completion, usage } = await demo.chat.complete(request, target, call());
    const content = completion.choices[0]?.message.content;
    expect(completion).toMatchObject({
      object: 'chat.completion',
      created: Math.floor(NOW / 1000),
      model: 'chat-small',
      choices: [{ index: 0, message: { role: 'assistant' }, finish_reason: 'stop' }],
    });
    expect(completion.id).toMatch(/^chatcmpl-demo_/);
    expect(content).toContain('chat-small');
    expect(content).toContain('2 messages');
    expect(content).not.toContain('llamas');
    const completionTokens = Math.ceil(content!.length / 4);
    expect(usage).toEqual({
      promptTokens: PROMPT_TOKENS,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      completionTokens,
    });
    expect(completion.usage).toMatchObject({
      prompt_tokens: PROMPT_TOKENS,
      completion_tokens: completionTokens,
      total_tokens: PROMPT_TOKENS + completionTokens,
    });
  });

  it('is deterministic: the same request gets the same text and counts', async () => {
    const a = await demo.chat.complete(request, target, call());
    const b = await demo.chat.complete(structuredClone(request), target, call());
    expect(b.completion.choices).toEqual(a.completion.choices);
    expect(b.usage).toEqual(a.usage);
  });

  it('counts the offered tools and earlier tool calls in the prompt', async () => {
    const withTools = await demo.chat.complete(
      {
        ...request,
        tool_choice: 'none',
        tools: [weather],
        messages: [
          ...request.messages,
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'c1', content: 'noon' },
        ],
      },
      target,
      call(),
    );
    const chars = 'Be brief.'.length + SECRET.length + 'get_time{}'.length + 'noon'.length;
    expect(withTools.usage?.promptTokens).toBe(Math.ceil((chars + JSON.stringify([weather]).length) / 4));
    expect(withTools.completion.choices[0]?.message.content).toContain('4 messages');
  });

  it('cuts the reply at max_tokens (4 characters a token), with finish_reason length', async () => {
    const full = (await demo.chat.complete(request, target, call())).completion.choices[0]!.message.content!;
    for (const field of ['max_tokens', 'max_completion_tokens'] as const) {
      const { completion, usage } = await demo.chat.complete({ ...request, [field]: 5 }, target, call());
      expect(completion.choices[0]?.finish_reason).toBe('length');
      expect(completion.choices[0]?.message.content).toBe(full.slice(0, 20));
      expect(usage?.completionTokens).toBe(5);
    }
    const roomy = await demo.chat.complete({ ...request, max_tokens: 1000 }, target, call());
    expect(roomy.completion.choices[0]?.finish_reason).toBe('stop');
    expect(roomy.completion.choices[0]?.message.content).toBe(full);
  });

  it('calls the first offered tool with the smallest arguments its schema requires', async () => {
    const { completion, usage } = await demo.chat.complete(
      { ...request, tools: [weather, time] },
      target,
      call(),
    );
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_demo_/), type: 'function', function: expect.any(Object) },
    ]);
    const fn = choice.message.tool_calls![0]!.function;
    expect(fn.name).toBe('get_weather');
    expect(JSON.parse(fn.arguments)).toEqual({ city: 'demo', unit: 'celsius', days: 1 });
    expect(usage?.completionTokens).toBe(Math.ceil(fn.arguments.length / 4));
  });

  it('calls the tool named by tool_choice, with {} when it takes no parameters; none means text', async () => {
    const named = await demo.chat.complete(
      {
        ...request,
        tools: [weather, time],
        tool_choice: { type: 'function', function: { name: 'get_time' } },
      },
      target,
      call(),
    );
    expect(named.completion.choices[0]?.message.tool_calls?.[0]?.function).toEqual({
      name: 'get_time',
      arguments: '{}',
    });
    expect(named.usage?.completionTokens).toBe(1);
    const required = await demo.chat.complete(
      { ...request, tools: [time], tool_choice: 'required' },
      target,
      call(),
    );
    expect(required.completion.choices[0]?.finish_reason).toBe('tool_calls');
    const none = await demo.chat.complete(
      { ...request, tools: [weather], tool_choice: 'none' },
      target,
      call(),
    );
    expect(none.completion.choices[0]?.finish_reason).toBe('stop');
    expect(none.completion.choices[0]?.message).not.toHaveProperty('tool_calls');
  });

  it('rejects with the abort reason when the call is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('client gone'));
    await expect(demo.chat.complete(request, target, { signal: controller.signal })).rejects.toThrow(
      'client gone',
    );
  });
});

describe('demo provider: stream', () => {
  it('streams the same text a few words per chunk, then the finish reason, with usage at the end', async () => {
    const { completion, usage: completeUsage } = await demo.chat.complete(request, target, call());
    const stream = await demo.chat.stream({ ...request, stream: true }, target, call());
    expect(stream.usage()).toBeNull();
    const chunks = await collect(stream.chunks);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
    const texts = chunks.slice(1, -1).map((c) => c.choices[0]?.delta.content ?? '');
    for (const text of texts) expect(text.trim().split(/\s+/).length).toBeLessThanOrEqual(3);
    expect(texts.join('')).toBe(completion.choices[0]?.message.content);
    expect(chunks.at(-1)?.choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'chat-small' });
      expect(chunk.usage).toBeUndefined(); // the usage chunk was consumed by the adapter
    }
    expect(stream.usage()).toEqual(completeUsage);
  });

  it('a streamed reply cut by max_tokens ends with finish_reason length and its usage', async () => {
    const stream = await demo.chat.stream({ ...request, max_tokens: 3 }, target, call());
    const chunks = await collect(stream.chunks);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toHaveLength(12);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('length');
    expect(stream.usage()).toMatchObject({ promptTokens: PROMPT_TOKENS, completionTokens: 3 });
  });

  it('streams a tool call: the name first, then its arguments, finish_reason tool_calls', async () => {
    const stream = await demo.chat.stream({ ...request, tools: [weather] }, target, call());
    const chunks = await collect(stream.chunks);
    expect(chunks).toHaveLength(3);
    expect(chunks[0]?.choices[0]?.delta.tool_calls).toEqual([
      {
        index: 0,
        id: expect.stringMatching(/^call_demo_/),
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
    ]);
    const args = chunks[1]?.choices[0]?.delta.tool_calls?.[0]?.function?.arguments;
    expect(JSON.parse(args!)).toEqual({ city: 'demo', unit: 'celsius', days: 1 });
    expect(chunks[2]?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(stream.usage()?.completionTokens).toBe(Math.ceil(args!.length / 4));
  });

  it('an abort while reading breaks the stream with the abort reason', async () => {
    const controller = new AbortController();
    const stream = await demo.chat.stream(request, target, { signal: controller.signal });
    const iterator = stream.chunks[Symbol.asyncIterator]();
    await iterator.next();
    controller.abort(new Error('client gone'));
    await expect(
      (async () => {
        for (;;) if ((await iterator.next()).done) return;
      })(),
    ).rejects.toThrow('client gone');
  });
});

describe('demo provider: config and registry', () => {
  const models = [
    {
      id: 'demo/chat-small',
      max_output_tokens: 4096,
      endpoints: [
        { provider: 'demo', upstream_model: 'chat-small', pricing: { prompt: '0.15', completion: '0.60' } },
      ],
    },
  ];

  it('{"format": "demo"} needs no URL or key, and its models are usable', () => {
    const config = parseGatewayConfig({ providers: { demo: { format: 'demo' } }, models });
    const catalogue = buildCatalogue(config, {});
    expect(catalogue.providers.get('demo')).toMatchObject({ format: 'demo', apiKey: null });
    expect(catalogue.model('demo/chat-small')?.endpoints[0]?.usable).toBe(true);
    const registry = createProviderRegistry(
      { request: () => Promise.reject(new Error('no network')) },
      Date.now,
    );
    expect(registry(catalogue.providers.get('demo')!)).toBeDefined();
  });

  it('refuses a base_url or a key on the demo provider, and an unknown format', () => {
    for (const extra of [{ base_url: 'https://example.com/v1' }, { api_key: 'sk-1' }]) {
      expect(() => parseGatewayConfig({ providers: { demo: { format: 'demo', ...extra } }, models })).toThrow(
        ConfigError,
      );
    }
    try {
      parseGatewayConfig({ providers: { demo: { format: 'gemini' } }, models });
      expect.unreachable();
    } catch (error) {
      expect((error as ConfigError).issues.map((i) => i.path)).toContain('$.providers.demo.format');
    }
  });

  it('goes through the registry with no network at all', async () => {
    const config = parseGatewayConfig({ providers: { demo: { format: 'demo' } }, models });
    const provider = buildCatalogue(config, {}).providers.get('demo')!;
    const registry = createProviderRegistry(
      { request: () => Promise.reject(new Error('no network')) },
      Date.now,
    );
    const { usage } = await registry(provider).chat!.complete(request, { ...target, provider }, call());
    expect(usage?.promptTokens).toBe(PROMPT_TOKENS);
  });
});
