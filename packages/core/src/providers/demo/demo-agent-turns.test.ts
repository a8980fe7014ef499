import Ajv2020 from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, ChatMessage, ChatRequest, ChatTool } from '../chat-types.js';
import { createDemoProvider } from './demo-provider.js';
import { demoCall, demoTarget } from './demo-target.test-support.js';

/*
 * The turns an agent loop needs from the demo model: a tool call for the user's question, a text
 * using the tools' results once they are in (so the loop ends), and JSON of the asked shape.
 */

const demo = createDemoProvider({ now: () => Date.UTC(2026, 0, 2) });
const target = demoTarget('chat-small');
const call = demoCall;

const weather: ChatTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const time: ChatTool = { type: 'function', function: { name: 'get_time' } };

const question: ChatMessage = { role: 'user', content: 'Weather in Lyon, and the time?' };
const calls: ChatMessage = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
    { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
  ],
};
const results: ChatMessage[] = [
  { role: 'tool', tool_call_id: 'call_1', content: '{"temperature_c":21,"sky":"clear"}' },
  { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:05' }] },
];
const afterTools: ChatRequest = {
  model: 'demo/chat-small',
  tools: [weather, time],
  messages: [question, calls, ...results],
};

async function streamedText(request: ChatRequest) {
  const stream = await demo.chat.stream(request, target, call());
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream.chunks) chunks.push(chunk);
  return {
    text: chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''),
    finishReason: chunks.at(-1)?.choices[0]?.finish_reason,
    usage: stream.usage(),
  };
}

describe('demo chat: after tool results', () => {
  it('answers in text that uses each result (named after its call), finish_reason stop, tools still offered', async () => {
    const { completion, usage } = await demo.chat.complete(afterTools, target, call());
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message).not.toHaveProperty('tool_calls');
    const text = choice.message.content!;
    expect(text).toContain('get_weather returned "{\\"temperature_c\\":21,\\"sky\\":\\"clear\\"}"');
    expect(text).toContain('get_time returned "14:05"');
    expect(text).toContain('4 messages');
    expect(usage?.completionTokens).toBe(Math.ceil(text.length / 4));
  });

  it('streams the same text, with the same usage', async () => {
    const { completion, usage } = await demo.chat.complete(afterTools, target, call());
    const streamed = await streamedText(afterTools);
    expect(streamed.text).toBe(completion.choices[0]?.message.content);
    expect(streamed.finishReason).toBe('stop');
    expect(streamed.usage).toEqual(usage);
  });

  it('quotes at most 200 characters of a long result', async () => {
    const long = 'x'.repeat(1000);
    const { completion } = await demo.chat.complete(
      { ...afterTools, messages: [question, calls, { role: 'tool', tool_call_id: 'call_1', content: long }] },
      target,
      call(),
    );
    expect(completion.choices[0]?.message.content).toContain(`get_weather returned "${'x'.repeat(200)}…"`);
    expect(completion.choices[0]?.message.content).not.toContain('x'.repeat(201));
  });

  it('still calls a tool when tool_choice demands one (required, or a named function)', async () => {
    const required = await demo.chat.complete({ ...afterTools, tool_choice: 'required' }, target, call());
    expect(required.completion.choices[0]?.finish_reason).toBe('tool_calls');
    const named = await demo.chat.complete(
      { ...afterTools, tool_choice: { type: 'function', function: { name: 'get_time' } } },
      target,
      call(),
    );
    expect(named.completion.choices[0]?.message.tool_calls?.[0]?.function.name).toBe('get_time');
  });

  it('calls a tool again when the user asks again after the results', async () => {
    const { completion } = await demo.chat.complete(
      { ...afterTools, messages: [...afterTools.messages, { role: 'user', content: 'And tomorrow?' }] },
      target,
      call(),
    );
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('answers the fixed text when the last message is the assistant’s, tools or not', async () => {
    const { completion } = await demo.chat.complete(
      { ...afterTools, messages: [question, { role: 'assistant', content: 'Sure.' }] },
      target,
      call(),
    );
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.choices[0]?.message.content).toContain('2 messages');
  });
});

describe('demo chat: response_format', () => {
  const schema = {
    type: 'object',
    properties: {
      city: { type: 'string' },
      days: {
        type: 'array',
        items: { type: 'object', properties: { high: { type: 'number' } }, required: ['high'] },
      },
      unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
    },
    required: ['city', 'days', 'unit'],
    additionalProperties: false,
  };
  const asked: ChatRequest = {
    model: 'demo/chat-small',
    messages: [{ role: 'user', content: 'Forecast as JSON' }],
    response_format: { type: 'json_schema', json_schema: { name: 'forecast', strict: true, schema } },
  };

  it('json_schema: the content is JSON valid against the schema, streamed the same', async () => {
    const { completion, usage } = await demo.chat.complete(asked, target, call());
    const content = completion.choices[0]!.message.content!;
    const value = JSON.parse(content);
    expect(new Ajv2020({ strict: false }).validate(schema, value)).toBe(true);
    expect(value).toEqual({ city: 'demo', days: [{ high: 0 }], unit: 'celsius' });
    expect(usage?.completionTokens).toBe(Math.ceil(content.length / 4));
    const streamed = await streamedText({ ...asked, stream: true });
    expect(streamed.text).toBe(content);
    expect(streamed.usage).toEqual(usage);
  });

  it('json_object: the content is a JSON object', async () => {
    const { completion } = await demo.chat.complete(
      { ...asked, response_format: { type: 'json_object' } },
      target,
      call(),
    );
    const value = JSON.parse(completion.choices[0]!.message.content!);
    expect(value).toMatchObject({ model: 'chat-small', messages: 1 });
    expect(typeof value).toBe('object');
    expect(Array.isArray(value)).toBe(false);
  });

  it('type text is the fixed reply', async () => {
    const { completion } = await demo.chat.complete(
      { ...asked, response_format: { type: 'text' } },
      target,
      call(),
    );
    expect(completion.choices[0]?.message.content).toContain('Hello from chat-small');
  });

  it('with tools offered, the user’s question gets the tool call; the results then get the JSON', async () => {
    const first = await demo.chat.complete({ ...asked, tools: [weather] }, target, call());
    expect(first.completion.choices[0]?.finish_reason).toBe('tool_calls');
    const toolCall = first.completion.choices[0]!.message.tool_calls![0]!;
    const second = await demo.chat.complete(
      {
        ...asked,
        tools: [weather],
        messages: [
          ...asked.messages,
          { role: 'assistant', content: null, tool_calls: [toolCall] },
          { role: 'tool', tool_call_id: toolCall.id, content: 'sunny' },
        ],
      },
      target,
      call(),
    );
    expect(JSON.parse(second.completion.choices[0]!.message.content!)).toMatchObject({ unit: 'celsius' });
  });

  it('max_tokens still cuts the JSON, with finish_reason length', async () => {
    const { completion, usage } = await demo.chat.complete({ ...asked, max_tokens: 2 }, target, call());
    expect(completion.choices[0]?.finish_reason).toBe('length');
    expect(completion.choices[0]?.message.content).toHaveLength(8);
    expect(usage?.completionTokens).toBe(2);
  });
});
