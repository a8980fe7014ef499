import { createAnthropic } from '@ai-sdk/anthropic';
import type Anthropic from '@anthropic-ai/sdk';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { expect, it } from 'vitest';
import {
  accumulateEvents,
  grammarViolations,
  parseEvents,
} from '../packages/core/src/operations/messages/anthropic-grammar.test-support.js';
import { cachedTokensBody, chargesOf, jsonReply, settledGeneration, sseReply } from './helpers/chat-wire.js';
import {
  anthropicClient,
  DEMO,
  GPT,
  GPT_PRICING,
  gatewayOf,
  micros,
  startMessagesGateway,
  UPSTREAM,
} from './helpers/messages-gateway.js';
import { parseSse } from './helpers/sse.js';
import { describeOnEachVariant } from './helpers/start-e2e-gateway.js';
import { fixtureWireBody } from './helpers/wire-fixtures.js';

/**
 * Real clients of the Anthropic Messages API, unchanged, against the real Node server on models
 * that are translated (an OpenAI-format upstream replaying recorded answers, and the offline demo
 * model): the official `@anthropic-ai/sdk` (`messages.create`, `messages.stream` → `finalMessage()`,
 * a tool round trip, `messages.countTokens`; the key as `apiKey` and as `authToken`) and the AI
 * SDK's `@ai-sdk/anthropic` provider with `baseURL` at the gateway.
 */

/** As long as the recorded answer's prompt (10,122 tokens), so that the hold covers its charge. */
const LONG_QUESTION = 'Name a holiday. '.repeat(2_600);

const weather: Anthropic.Tool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describeOnEachVariant(
  'Messages API: real clients on translated routes',
  startMessagesGateway,
  (gw) => {
    it('messages.create (apiKey) on an OpenAI-format route: a Messages answer, charged from the upstream usage', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      g.mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));
      const answer = await anthropicClient(g.url, tenant.inferenceKey).messages.create({
        model: GPT,
        max_tokens: 300,
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [{ role: 'user', content: LONG_QUESTION }],
      });
      const upstream = cachedTokensBody() as { choices: { message: { content: string } }[] };
      expect(answer.type).toBe('message');
      expect(answer.id).toMatch(/^msg_/);
      expect(answer.content).toEqual([{ type: 'text', text: upstream.choices[0]!.message.content }]);
      expect(answer.stop_reason).toBe('end_turn');
      expect(answer.usage).toMatchObject({
        input_tokens: 10122 - 9984,
        cache_read_input_tokens: 9984,
        cache_creation_input_tokens: 0,
      });
      // The output ceiling goes in the provider's field; Anthropic's cache markers do not go to OpenAI.
      const sent = g.mock.received.at(-1)!.body;
      expect(sent.max_completion_tokens).toBe(300);
      expect(sent).not.toHaveProperty('max_tokens');
      expect(sent.messages).toEqual([
        { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
        { role: 'user', content: LONG_QUESTION },
      ]);
      const gateway = gatewayOf(answer);
      const expected = micros(GPT_PRICING, {
        input: 10122 - 9984,
        cacheRead: 9984,
        output: answer.usage.output_tokens,
      });
      expect(gateway.cost_micros).toBe(expected);
      const record = await settledGeneration(g.url, tenant.inferenceKey, gateway.request_id);
      expect(record).toMatchObject({ endpoint: 'messages', status: 'success', cost_micros: expected });
      expect((await chargesOf(g.storage, tenant.account.id)).map((e) => -e.amountMicros)).toEqual([expected]);
    });

    it('messages.stream (authToken) → finalMessage() on a recorded OpenAI stream', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      g.mock.enqueue(UPSTREAM.openai, sseReply('openai-chat-stream-text-include-usage.chunks.txt'));
      const stream = anthropicClient(g.url, tenant.inferenceKey, 'authToken').messages.stream({
        model: GPT,
        max_tokens: 1024,
        messages: [{ role: 'user', content: 'Name a holiday.' }],
      });
      const message = await stream.finalMessage();
      const recorded = fixtureWireBody('openai-chat-stream-text-include-usage.chunks.txt');
      const text = parseSse(recorded)
        .filter((e) => e.data !== '[DONE]')
        .map((e) => JSON.parse(e.data).choices[0]?.delta?.content ?? '')
        .join('');
      expect(message.content).toEqual([{ type: 'text', text }]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage).toMatchObject({ input_tokens: 16, output_tokens: 300 });
      // The answer's id is the request's (`req_…` → `msg_…`).
      const record = await settledGeneration(g.url, tenant.inferenceKey, message.id.replace(/^msg_/, 'req_'));
      expect(record).toMatchObject({ endpoint: 'messages', stream: true, status: 'success' });
      expect(record.cost_micros).toBe(micros(GPT_PRICING, { input: 16, output: 300 }));
    });

    it.each([
      'openai-chat-stream-text-include-usage.chunks.txt',
      'openai-chat-stream-parallel-tool-calls-include-usage.sse',
      'openai-compatible-anthropic-endpoint-tool-call.sse',
      'openai-compatible-deepseek-stream-tool-call.chunks.txt',
    ])('%s streams in Anthropic’s exact grammar through the server', async (fixture) => {
      const g = gw();
      const tenant = await g.newTenant();
      g.mock.enqueue(UPSTREAM.openai, sseReply(fixture));
      const response = await fetch(`${g.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.inferenceKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: GPT,
          max_tokens: 1024,
          stream: true,
          tools: [weather],
          messages: [{ role: 'user', content: 'Weather in Paris and Berlin?' }],
        }),
      });
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const events = parseEvents(await response.text());
      expect(grammarViolations(events)).toEqual([]);
      expect(accumulateEvents(events).stopReason).toMatch(/^(end_turn|tool_use)$/);
    });

    it('a tool round trip (authToken, streamed): the upstream call id comes back as tool_use_id', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      const client = anthropicClient(g.url, tenant.inferenceKey, 'authToken');
      const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
      g.mock.enqueue(UPSTREAM.openai, sseReply('openai-chat-stream-single-tool-call-include-usage.sse'));
      const first = await client.messages
        .stream({ model: GPT, max_tokens: 500, tools: [weather], messages: [question] })
        .finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      const call = first.content.find((block) => block.type === 'tool_use');
      expect(call).toMatchObject({ id: 'call_c91SqDXlYFuETYv8mUHzz6pp', name: 'GetWeatherArgs' });
      expect(Object.keys(call?.type === 'tool_use' ? (call.input as object) : {})).toContain('city');

      g.mock.enqueue(UPSTREAM.openai, sseReply('openai-chat-stream-text-include-usage.chunks.txt'));
      const second = await client.messages
        .stream({
          model: GPT,
          max_tokens: 500,
          tools: [weather],
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: call!.id, content: '18°C, sunny' }],
            },
          ],
        })
        .finalMessage();
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content[0]).toMatchObject({ type: 'text' });
      const sent = g.mock.received.at(-1)!.body as { messages: Record<string, unknown>[] };
      expect(sent.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_c91SqDXlYFuETYv8mUHzz6pp',
              type: 'function',
              function: {
                name: 'GetWeatherArgs',
                arguments: JSON.stringify(call?.type === 'tool_use' && call.input),
              },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_c91SqDXlYFuETYv8mUHzz6pp', content: '18°C, sunny' },
      ]);
    });

    it('messages.countTokens on a translated model: the pre-flight estimate, not charged, not recorded', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      const client = anthropicClient(g.url, tenant.inferenceKey);
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'How many tokens is this?' }];
      const counted = await client.messages.countTokens({ model: GPT, messages, tools: [weather] });
      expect(counted.input_tokens).toBeGreaterThan(0);
      expect(await chargesOf(g.storage, tenant.account.id)).toEqual([]);
      const listed = await fetch(`${g.url}/v1/generations`, {
        headers: { authorization: `Bearer ${tenant.inferenceKey}` },
      });
      expect(((await listed.json()) as { data: unknown[] }).data).toEqual([]);
    });

    it('@ai-sdk/anthropic with baseURL at the gateway: generateText with a tool, and streamText', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      const anthropic = createAnthropic({ baseURL: `${g.url}/v1`, apiKey: tenant.inferenceKey });
      const called = await generateText({
        model: anthropic(DEMO),
        maxOutputTokens: 400,
        prompt: 'What is the weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'The weather in a city',
            inputSchema: jsonSchema<{ city: string }>({
              type: 'object',
              properties: { city: { type: 'string' } },
              required: ['city'],
            }),
          }),
        },
      });
      expect(called.toolCalls).toHaveLength(1);
      expect(called.toolCalls[0]).toMatchObject({
        toolName: 'get_weather',
        input: { city: expect.any(String) },
      });

      g.mock.enqueue(UPSTREAM.openai, sseReply('openai-chat-stream-text-include-usage.chunks.txt'));
      const streamed = streamText({
        model: anthropic(GPT),
        maxOutputTokens: 1024,
        prompt: 'Name a holiday.',
      });
      const text = await streamed.text;
      expect(text.length).toBeGreaterThan(100);
      expect(await streamed.finishReason).toBe('stop');
      expect((await streamed.usage).outputTokens).toBe(300);
    });
  },
  (g) => g.mock.reset(),
);
