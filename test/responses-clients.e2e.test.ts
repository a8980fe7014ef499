import { createOpenAI } from '@ai-sdk/openai';
import { Agent, tool as agentTool, OpenAIProvider, Runner } from '@openai/agents';
import { type GatewayConfig, parseGatewayConfig } from '@tollgate/core';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chargesOf, jsonReply, settledGeneration } from './helpers/chat-wire.js';
import { openAiCompletion, openAiStreamEvents } from './helpers/records-wire.js';
import { nativeStreamBodies } from './helpers/responses-wire.js';
import { describeOnEachVariant, type E2eGateway, startE2eGateway } from './helpers/start-e2e-gateway.js';
import type { StorageVariant } from './helpers/storage-variants.js';
import { readFixture, sseEventsOf } from './helpers/wire-fixtures.js';

/**
 * Real clients, unchanged, against the real Node server on `POST /v1/responses`: the official
 * `openai` SDK (`responses.create`, `responses.stream`, a function-tool round trip), the AI SDK's
 * `openai(model)` (the Responses API by default: `generateText` with a tool, `streamText`) and
 * `@openai/agents` running an agent with one function tool on its default settings (the Responses
 * API, no model settings). Routes: an OpenAI-format chat upstream (translated), an upstream that
 * serves `/responses` itself (native), and the built-in demo provider (offline). Upstreams are a
 * loopback mock replaying recorded wire shapes.
 */

const CHAT = 'acme/chat';
const NATIVE = 'acme/native';
const DEMO = 'demo/chat';

function clientsConfig(mockUrl: string): GatewayConfig {
  return parseGatewayConfig({
    providers: {
      chat: { format: 'openai', base_url: `${mockUrl}/chat-up/v1`, api_key: 'sk-chat' },
      native: {
        format: 'openai',
        base_url: `${mockUrl}/native-up/v1`,
        api_key: 'sk-native',
        responses: true,
      },
      demo: { format: 'demo' },
    },
    models: [
      {
        id: CHAT,
        max_output_tokens: 1000,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'chat', upstream_model: 'gpt-4o-mini', pricing: { prompt: '1', completion: '2' } },
        ],
      },
      {
        id: NATIVE,
        max_output_tokens: 1000,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'native', upstream_model: 'gpt-5-mini', pricing: { prompt: '1', completion: '2' } },
        ],
      },
      {
        id: DEMO,
        max_output_tokens: 1000,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'demo', upstream_model: 'chat-small', pricing: { prompt: '1', completion: '2' } },
        ],
      },
    ],
  });
}

const start = (variant: StorageVariant) =>
  startE2eGateway({ config: clientsConfig, open: () => variant.open(), undici: true });

const CHAT_PATH = '/chat-up/v1/chat/completions';
const RESPONSES_PATH = '/native-up/v1/responses';

/** A streamed chat reply in the recorded shape. */
const chatStream = (text: string) => ({
  kind: 'sse' as const,
  events: openAiStreamEvents({ text, usage: { prompt: 9, completion: 4 } }),
});
/** A recorded native Responses stream, one event per write. */
const nativeStream = (body: string) => ({ kind: 'sse' as const, events: sseEventsOf(body) });
/** The terminal Response of a recorded stream (a recorded Response, as a JSON answer). */
const terminalOf = (body: string) => JSON.parse(sseEventsOf(body).at(-1)!.split('data: ')[1]!).response;

const [CALCULATOR_CALL, , , FINAL_TEXT] = nativeStreamBodies(
  'openai-responses-reasoning-tool-loop.chunks.txt',
);

const weatherParameters = {
  type: 'object' as const,
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};

async function expectChargedResponses(g: E2eGateway, accountId: string, key: string, count: number) {
  const charges = await chargesOf(g.storage, accountId);
  expect(charges).toHaveLength(count);
  for (const charge of charges) {
    const record = await settledGeneration(g.url, key, charge.requestId!);
    expect(record).toMatchObject({
      endpoint: 'responses',
      status: 'success',
      cost_micros: -charge.amountMicros,
    });
  }
}

describeOnEachVariant(
  'real clients on POST /v1/responses',
  start,
  (gw) => {
    describe('the openai SDK (6.49.0)', () => {
      it('responses.create on a translated route: output_text, the gateway object, one charge', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        g.mock.enqueue(
          CHAT_PATH,
          jsonReply(openAiCompletion({ text: 'Hello from chat.', usage: { prompt: 20, completion: 5 } })),
        );
        const response = await g
          .client(tenant.inferenceKey)
          .responses.create({ model: CHAT, input: 'Say hello', instructions: 'Be brief.' });
        expect(response.output_text).toBe('Hello from chat.');
        expect(response.id).toMatch(/^resp_/);
        expect((response as unknown as { gateway: { cost_micros: number } }).gateway.cost_micros).toBe(30);
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 1);
      });

      it('responses.stream on a translated route: the events, finalResponse() and its output_text', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        g.mock.enqueue(CHAT_PATH, chatStream('Streamed through the gateway.'));
        const stream = g
          .client(tenant.inferenceKey)
          .responses.stream({ model: CHAT, input: 'Stream please' });
        const deltas: string[] = [];
        stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
        const final = await stream.finalResponse();
        expect(final.output_text).toBe('Streamed through the gateway.');
        expect(deltas.join('')).toBe('Streamed through the gateway.');
        expect(final.status).toBe('completed');
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 1);
      });

      it('a function-tool round trip: function_call out, function_call_output back, the answer', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const client = g.client(tenant.inferenceKey);
        g.mock.enqueue(
          CHAT_PATH,
          jsonReply(
            openAiCompletion({
              text: '',
              toolCall: { id: 'call_w1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              usage: { prompt: 30, completion: 8 },
            }),
          ),
          jsonReply(openAiCompletion({ text: 'Sunny in Paris.', usage: { prompt: 50, completion: 4 } })),
        );
        const tools = [
          { type: 'function' as const, name: 'get_weather', parameters: weatherParameters, strict: true },
        ];
        const first = await client.responses.create({ model: CHAT, input: 'Weather in Paris?', tools });
        const call = first.output.find((item) => item.type === 'function_call');
        expect(call).toMatchObject({
          name: 'get_weather',
          call_id: 'call_w1',
          arguments: '{"city":"Paris"}',
        });
        const second = await client.responses.create({
          model: CHAT,
          tools,
          // The SDK's own items of the first answer, sent back as they came.
          input: [
            { role: 'user', content: 'Weather in Paris?' },
            ...first.output,
            { type: 'function_call_output', call_id: 'call_w1', output: '{"sky":"sunny"}' },
          ] as OpenAI.Responses.ResponseInput,
        });
        expect(second.output_text).toBe('Sunny in Paris.');
        expect(g.mock.received[1]!.body.messages).toContainEqual({
          role: 'tool',
          tool_call_id: 'call_w1',
          content: '{"sky":"sunny"}',
        });
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 2);
      });

      it('on a native route: responses.create and responses.stream get the upstream’s own Response and events', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const client = g.client(tenant.inferenceKey);
        g.mock.enqueue(
          RESPONSES_PATH,
          jsonReply(JSON.parse(readFixture('openai-responses-text.recorded.json'))),
          nativeStream(FINAL_TEXT!),
        );
        const created = await client.responses.create({
          model: NATIVE,
          input: "What's the weather like in SF?",
        });
        expect(created.id).toBe('resp_689a0b2545288193953c892439b42e2800b2e36c65a1fd4b');
        expect(created.output_text).toMatch(/^I can't provide real-time updates/);
        const final = await client.responses.stream({ model: NATIVE, input: 'Result?' }).finalResponse();
        expect(final.output_text).toBe('The final result is **570**.');
        expect(g.mock.received.map((r) => r.body.store)).toEqual([false, false]);
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 2);
      });

      it('on the demo provider: text, a stream, and a function call when tools are offered', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const client = g.client(tenant.inferenceKey);
        const created = await client.responses.create({ model: DEMO, input: 'Hello!' });
        expect(created.output_text).toMatch(/^Hello from chat-small, the offline demo model of Tollgate/);
        const final = await client.responses.stream({ model: DEMO, input: 'Hello again!' }).finalResponse();
        expect(final.output_text).toMatch(/^Hello from chat-small/);
        const withTool = await client.responses.create({
          model: DEMO,
          input: 'Weather?',
          tools: [{ type: 'function', name: 'get_weather', parameters: weatherParameters, strict: true }],
        });
        expect(withTool.output).toEqual([
          expect.objectContaining({
            type: 'function_call',
            name: 'get_weather',
            arguments: '{"city":"demo"}',
          }),
        ]);
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 3);
      });
    });

    describe('the AI SDK (ai 6.0.326, @ai-sdk/openai 3.0.141): openai(model) speaks Responses', () => {
      const providerFor = (g: E2eGateway, key: string) =>
        createOpenAI({ baseURL: `${g.url}/v1`, apiKey: key });

      it('generateText with a tool: the call, the tool’s result sent back, the answer (two steps)', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        g.mock.enqueue(
          CHAT_PATH,
          jsonReply(
            openAiCompletion({
              text: '',
              toolCall: { id: 'call_ai1', name: 'weather', arguments: '{"city":"Oslo"}' },
              usage: { prompt: 30, completion: 8 },
            }),
          ),
          jsonReply(openAiCompletion({ text: 'Snow in Oslo.', usage: { prompt: 50, completion: 4 } })),
        );
        const seen: string[] = [];
        const result = await generateText({
          model: providerFor(g, tenant.inferenceKey)(CHAT),
          prompt: 'Weather in Oslo?',
          tools: {
            weather: tool({
              description: 'The weather of a city',
              inputSchema: z.object({ city: z.string() }),
              execute: async ({ city }) => {
                seen.push(city);
                return { city, sky: 'snow' };
              },
            }),
          },
          stopWhen: stepCountIs(2),
        });
        expect(seen).toEqual(['Oslo']);
        expect(result.text).toBe('Snow in Oslo.');
        expect(result.steps[0]!.toolCalls).toMatchObject([{ toolName: 'weather', input: { city: 'Oslo' } }]);
        const sent = g.mock.received.map((r) => `${r.method} ${r.path}`);
        expect(sent).toEqual([`POST ${CHAT_PATH}`, `POST ${CHAT_PATH}`]);
        expect(JSON.stringify(g.mock.received[1]!.body.messages)).toContain('snow');
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 2);
      });

      it('streamText, translated and native: the text as it streams', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const openai = providerFor(g, tenant.inferenceKey);
        g.mock.enqueue(CHAT_PATH, chatStream('Words from chat.'));
        g.mock.enqueue(RESPONSES_PATH, nativeStream(FINAL_TEXT!));
        for (const [model, expected] of [
          [CHAT, 'Words from chat.'],
          [NATIVE, 'The final result is **570**.'],
        ] as const) {
          const result = streamText({ model: openai(model), prompt: 'Speak' });
          let text = '';
          for await (const delta of result.textStream) text += delta;
          expect(text).toBe(expected);
          expect(await result.finishReason).toBe('stop');
        }
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 2);
      });

      it('on the demo provider: generateText answers and calls a tool when one is offered', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const openai = providerFor(g, tenant.inferenceKey);
        const text = await generateText({ model: openai(DEMO), prompt: 'Hello' });
        expect(text.text).toMatch(/^Hello from chat-small/);
        const called = await generateText({
          model: openai(DEMO),
          prompt: 'Weather?',
          tools: { weather: tool({ inputSchema: z.object({ city: z.string() }) }) },
        });
        expect(called.toolCalls).toMatchObject([{ toolName: 'weather', input: { city: 'demo' } }]);
      });
    });

    describe('@openai/agents (0.14.3) on its default settings', () => {
      /**
       * Runs an agent with one function tool (a calculator that answers 19), its model provider the
       * SDK's own OpenAI one (the Responses API by default) with its client pointed at the gateway.
       * Trace export is off: it would call api.openai.com, which this machine cannot reach.
       */
      async function runCalculator(g: E2eGateway, key: string, model: string, seen: unknown[]) {
        const agent = new Agent({
          name: 'Calculator',
          instructions: 'Use the calculator, then give the result.',
          model,
          tools: [
            agentTool({
              name: 'calculator',
              description: 'A minimal calculator for basic arithmetic.',
              parameters: z.object({
                a: z.number(),
                b: z.number(),
                op: z.enum(['add', 'subtract', 'multiply', 'divide']),
              }),
              execute: async (input) => {
                seen.push(input);
                return '19';
              },
            }),
          ],
        });
        const runner = new Runner({
          modelProvider: new OpenAIProvider({ openAIClient: g.client(key) }),
          tracingDisabled: true,
        });
        return runner.run(agent, 'What is 12 + 7?');
      }

      it('runs an agent with one function tool through a translated route: tool call, result, final output', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        g.mock.enqueue(
          CHAT_PATH,
          jsonReply(
            openAiCompletion({
              text: '',
              toolCall: { id: 'call_ag1', name: 'calculator', arguments: '{"a":12,"b":7,"op":"add"}' },
              usage: { prompt: 40, completion: 10 },
            }),
          ),
          jsonReply(openAiCompletion({ text: 'The result is 19.', usage: { prompt: 60, completion: 5 } })),
        );
        const seen: unknown[] = [];
        const result = await runCalculator(g, tenant.inferenceKey, CHAT, seen);
        expect(seen).toEqual([{ a: 12, b: 7, op: 'add' }]);
        expect(result.finalOutput).toBe('The result is 19.');
        expect(g.mock.received[1]!.body.messages).toContainEqual({
          role: 'tool',
          tool_call_id: 'call_ag1',
          content: '19',
        });
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 2);
      });

      it('runs the same agent through a native route, on recorded Responses', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        g.mock.enqueue(
          RESPONSES_PATH,
          jsonReply(terminalOf(CALCULATOR_CALL!)),
          jsonReply(terminalOf(FINAL_TEXT!)),
        );
        const seen: unknown[] = [];
        const result = await runCalculator(g, tenant.inferenceKey, NATIVE, seen);
        expect(seen).toEqual([{ a: 12, b: 7, op: 'add' }]);
        expect(result.finalOutput).toBe('The final result is **570**.');
        const [, second] = g.mock.received;
        expect(JSON.stringify(second!.body.input)).toContain('function_call_output');
        await expectChargedResponses(g, tenant.account.id, tenant.inferenceKey, 2);
      });

      it('runs the agent on the demo provider, offline, to a final answer', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const seen: unknown[] = [];
        const result = await runCalculator(g, tenant.inferenceKey, DEMO, seen);
        expect(seen).toHaveLength(1);
        expect(result.finalOutput).toEqual(expect.any(String));
        expect(String(result.finalOutput).length).toBeGreaterThan(0);
      });
    });
  },
  (g) => g.mock.reset(),
);
