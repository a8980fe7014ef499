import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { describeChatInProcess, MAX_OUTPUT, PROVIDER_KEYS, UPSTREAM } from './helpers/chat-gateway.js';
import {
  cachedTokensBody,
  entriesFor,
  fixtureJson,
  getGeneration,
  jsonReply,
  usd6,
} from './helpers/chat-wire.js';
import { call, expectError, REQUEST_ID } from './helpers/http.js';

type Params = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
// biome-ignore lint/suspicious/noExplicitAny: the gateway object is not in the SDK's types.
type WithGateway = OpenAI.Chat.ChatCompletion & { gateway: any };

const GATEWAY_OWNED = ['models', 'provider', 'transforms', 'route', 'metadata', 'plugins', 'preset'];

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather for a city',
    parameters: {
      type: 'object',
      properties: { location: { type: 'string' }, units: { type: 'string', enum: ['c', 'f'] } },
      required: ['location'],
    },
  },
};

const jsonTool = {
  type: 'function' as const,
  function: {
    name: 'json',
    description: 'Respond with JSON',
    parameters: {
      type: 'object',
      properties: { elements: { type: 'array', items: { type: 'object' } } },
      required: ['elements'],
    },
  },
};

describeChatInProcess('chat completions, non-streaming', (gw) => {
  describe('OpenAI format', () => {
    it('returns the message, the serving catalogue model, the gateway object with the exact cost, and the cost and request id headers', async () => {
      const { mock, url, storage } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));

      const { data, response } = await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({
          model: 'acme/gpt',
          messages: [{ role: 'user', content: 'Say ok' }],
        })
        .withResponse();
      const completion = data as WithGateway;

      expect(completion.choices[0]!.message).toEqual({
        role: 'assistant',
        content: 'ok',
        refusal: null,
        annotations: [],
      });
      expect(completion.choices[0]!.finish_reason).toBe('stop');
      // The catalogue id that served, not the upstream's "gpt-4o-mini-2024-07-18".
      expect(completion.model).toBe('acme/gpt');
      expect(completion.usage).toMatchObject({
        prompt_tokens: 10_122,
        completion_tokens: 1,
        prompt_tokens_details: { cached_tokens: 9_984 },
      });

      // acme/gpt: prompt 0.11, cached 0.055, completion 0.44 USD per million tokens.
      //   uncached (10122 − 9984) = 138 × 0.11  =  15.18
      //   cached            9984 × 0.055       = 549.12
      //   completion           1 × 0.44        =   0.44
      //   Σ = 564.74 micros → rounded up once = 565
      // (rounding each part up separately would give 16 + 550 + 1 = 567)
      const cost = 565;
      expect(completion.gateway).toMatchObject({
        request_id: expect.stringMatching(REQUEST_ID),
        cost_micros: cost,
        cost_usd: 0.000565,
        model: 'acme/gpt',
        provider: 'openai',
        attempts: 1,
        cost_breakdown: expect.any(Object),
      });
      const breakdown = completion.gateway.cost_breakdown as Record<string, unknown>;
      const microsParts = Object.entries(breakdown)
        .filter(([name]) => name.endsWith('_micros'))
        .reduce((sum, [, value]) => sum + (value as number), 0);
      expect(microsParts, 'the breakdown splits the total').toBe(cost);
      expect(completion.gateway.waived).toBeUndefined();
      expect(response.headers.get('x-gateway-cost-usd')).toBe('0.000565');
      expect(response.headers.get('x-gateway-cost-usd')).toBe(usd6(cost));
      expect(response.headers.get('x-gateway-request-id')).toBe(completion.gateway.request_id);

      const requestId = completion.gateway.request_id as string;
      const ledger = await entriesFor(storage, tenant.account.id, requestId);
      expect(ledger).toHaveLength(1);
      expect(ledger[0]).toMatchObject({ kind: 'charge', amountMicros: -cost, requestId });
      expect(ledger[0]!.description).toContain('acme/gpt');

      const generation = await getGeneration(url, tenant.inferenceKey, requestId);
      expect(generation.status).toBe(200);
      expect(generation.body.data).toMatchObject({
        id: requestId,
        model: 'acme/gpt',
        provider: 'openai',
        status: 'success',
        attempts: 1,
        cost_micros: cost,
        usage: { prompt_tokens: 10_122, completion_tokens: 1, cached_tokens: 9_984 },
        finish_reason: 'stop',
        routing: { failures: [] },
      });
    });

    it('sends upstream the request without the gateway-owned fields, with unknown fields and tools unchanged, the upstream model and the provider key', async () => {
      const { mock } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));
      const passedThrough = {
        messages: [
          { role: 'system', content: 'Answer in one word.' },
          { role: 'user', content: 'Weather in Paris?' },
        ],
        tools: [weatherTool],
        tool_choice: 'auto',
        temperature: 0.2,
        seed: 7,
        user: 'end-user-42',
        x_vendor_flag: { nested: [1, { a: 'b' }], on: true },
      };
      const gatewayOwned = {
        models: ['acme/claude'],
        provider: { order: ['openai'], allow_fallbacks: true },
        transforms: ['middle-out'],
        route: 'fallback',
        metadata: { customer: 'cus_1' },
        plugins: [],
        preset: null,
      };

      const completion = await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({
          model: 'acme/gpt',
          ...passedThrough,
          ...gatewayOwned,
        } as unknown as Params);
      expect((completion as WithGateway).gateway.provider).toBe('openai');

      expect(mock.received).toHaveLength(1);
      const upstream = mock.received[0]!;
      expect(upstream.method).toBe('POST');
      expect(upstream.path).toBe(UPSTREAM.openai);
      expect(upstream.headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.openai}`);
      expect(upstream.headers.authorization).not.toContain(tenant.inferenceKey);
      for (const field of GATEWAY_OWNED)
        expect(upstream.body, `${field} must not go upstream`).not.toHaveProperty(field);
      // With no ceiling of its own the request is held at the model's, which goes upstream too.
      expect(upstream.body).toEqual({ model: 'gpt-4o-mini', ...passedThrough, max_tokens: MAX_OUTPUT.gpt });
      // Nothing of the caller's gateway key reaches the provider.
      expect(upstream.rawBody).not.toContain(tenant.inferenceKey);
    });
  });

  describe('Anthropic format', () => {
    it('anthropic-message-tool-use.json: a tool_use block becomes tool_calls with the id kept and the input as a JSON string; cost from Anthropic usage', async () => {
      const { mock, storage } = gw();
      const tenant = await gw().newTenant();
      const recorded = fixtureJson<{ content: { input: unknown }[] }>('anthropic-message-tool-use.json');
      mock.enqueue(UPSTREAM.anthropic, jsonReply(recorded));

      const { data, response } = await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({
          model: 'acme/claude',
          messages: [
            { role: 'system', content: 'You are a weather service.' },
            { role: 'user', content: 'Weather in four cities, as JSON.' },
          ],
          tools: [jsonTool],
          tool_choice: 'required',
          max_tokens: 500,
        })
        .withResponse();
      const completion = data as WithGateway;

      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.role).toBe('assistant');
      expect(choice.message.content).toBeNull();
      expect(choice.message.tool_calls).toEqual([
        {
          id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa',
          type: 'function',
          function: { name: 'json', arguments: expect.any(String) },
        },
      ]);
      const call0 = choice.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
      expect(JSON.parse(call0.function.arguments)).toEqual(recorded.content[0]!.input);
      expect(completion.model).toBe('acme/claude');
      expect(completion.usage).toMatchObject({ prompt_tokens: 1151, completion_tokens: 87 });

      // acme/claude: 3 / 15 USD per million. 1151 × 3 = 3453 + 87 × 15 = 1305 → 4758 micros.
      expect(completion.gateway).toMatchObject({
        cost_micros: 4758,
        cost_usd: 0.004758,
        model: 'acme/claude',
        provider: 'anthropic',
        attempts: 1,
      });
      expect(response.headers.get('x-gateway-cost-usd')).toBe('0.004758');
      // A turn that only calls tools is billed normally.
      const ledger = await entriesFor(storage, tenant.account.id, completion.gateway.request_id);
      expect(ledger.map((e) => e.amountMicros)).toEqual([-4758]);

      // What Anthropic received: its own request shape and headers.
      expect(mock.received).toHaveLength(1);
      const upstream = mock.received[0]!;
      expect(upstream.path).toBe(UPSTREAM.anthropic);
      expect(upstream.headers['x-api-key']).toBe(PROVIDER_KEYS.anthropic);
      expect(upstream.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(upstream.headers.authorization).toBeUndefined();
      expect(upstream.body).toMatchObject({
        model: 'claude-sonnet-4-5',
        max_tokens: 500,
        system: 'You are a weather service.',
        messages: [{ role: 'user', content: 'Weather in four cities, as JSON.' }],
        tools: [
          {
            name: 'json',
            description: 'Respond with JSON',
            input_schema: jsonTool.function.parameters,
          },
        ],
        tool_choice: { type: 'any' },
      });
      expect(upstream.body.tools as unknown[]).toHaveLength(1);
      expect((upstream.body.tools as Record<string, unknown>[])[0]).not.toHaveProperty('parameters');
      expect((upstream.body.messages as { role: string }[]).map((m) => m.role)).toEqual(['user']);
    });

    it('anthropic-message-text-and-tool-use-no-args.json: text and a tool call whose empty input becomes "{}"', async () => {
      const { mock } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(
        UPSTREAM.anthropic,
        jsonReply(fixtureJson('anthropic-message-text-and-tool-use-no-args.json')),
      );

      const completion = (await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({
          model: 'acme/claude',
          messages: [{ role: 'user', content: 'Update the issue list.' }],
          tools: [
            {
              type: 'function',
              function: { name: 'updateIssueList', parameters: { type: 'object', properties: {} } },
            },
          ],
        })) as WithGateway;

      const choice = completion.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBe(
        '<thinking>\nThe updateIssueList tool was provided in the list of available functions. The tool has no required parameters, so it can be called without any additional information needed from the user.\n</thinking>\n\nOkay, I will update the current issue list:',
      );
      expect(choice.message.tool_calls).toEqual([
        {
          id: 'toolu_01LRmxn9vGM1d2DZSDBowdZ1',
          type: 'function',
          function: { name: 'updateIssueList', arguments: '{}' },
        },
      ]);
      // 602 × 3 = 1806 + 93 × 15 = 1395 → 3201 micros.
      expect(completion.gateway).toMatchObject({
        cost_micros: 3201,
        provider: 'anthropic',
        model: 'acme/claude',
      });

      // No max_tokens in the request: the model's output ceiling is sent, as Anthropic requires one.
      expect(mock.received[0]!.body.max_tokens).toBe(MAX_OUTPUT.claude);
      expect(mock.received[0]!.body).not.toHaveProperty('system');
      // No tool_choice in the request: none is sent (automatic choice).
      expect(mock.received[0]!.body).not.toHaveProperty('tool_choice');
    });

    it('maps tool_choice: none → {type:none}, auto → {type:auto}, a named function → {type:tool,name}, required → {type:any}', async () => {
      const { mock } = gw();
      const tenant = await gw().newTenant();
      const client = gw().client(tenant.inferenceKey);
      const choices: [Params['tool_choice'], unknown][] = [
        ['none', { type: 'none' }],
        ['auto', { type: 'auto' }],
        [
          { type: 'function', function: { name: 'json' } },
          { type: 'tool', name: 'json' },
        ],
        ['required', { type: 'any' }],
      ];
      for (const [choice, expected] of choices) {
        mock.enqueue(UPSTREAM.anthropic, jsonReply(fixtureJson('anthropic-message-tool-use.json')));
        await client.chat.completions.create({
          model: 'acme/claude',
          messages: [{ role: 'user', content: 'Weather, as JSON.' }],
          tools: [jsonTool],
          tool_choice: choice,
        });
        expect(mock.received.at(-1)!.body.tool_choice, JSON.stringify(choice)).toEqual(expected);
      }
      expect(mock.received).toHaveLength(choices.length);
    });

    it('a full tool loop: the assistant tool_calls arrive as tool_use blocks and the role:tool results as one user message of tool_result blocks', async () => {
      const { mock } = gw();
      const tenant = await gw().newTenant();
      const client = gw().client(tenant.inferenceKey);
      const tools = [
        weatherTool,
        { type: 'function' as const, function: { name: 'get_time', parameters: { type: 'object' } } },
      ];
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: 'system', content: 'Use the tools.' },
        { role: 'user', content: 'Weather and time in Paris?' },
      ];

      // Turn 1: the model calls a tool (recorded answer).
      mock.enqueue(UPSTREAM.anthropic, jsonReply(fixtureJson('anthropic-message-tool-use.json')));
      const first = await client.chat.completions.create({ model: 'acme/claude', messages, tools });
      const assistant = first.choices[0]!.message;
      expect(assistant.tool_calls).toHaveLength(1);

      // Turn 2: append the assistant message, a second call of ours, and one tool message per call.
      const recordedCall = assistant.tool_calls![0]!;
      const loop: OpenAI.Chat.ChatCompletionMessageParam[] = [
        ...messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            ...(assistant.tool_calls as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[]),
            { id: 'toolu_time_2', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: recordedCall.id, content: 'rendered 4 cities' },
        { role: 'tool', tool_call_id: 'toolu_time_2', content: '14:05' },
      ];
      mock.enqueue(
        UPSTREAM.anthropic,
        jsonReply(fixtureJson('anthropic-message-text-and-tool-use-no-args.json')),
      );
      const second = (await client.chat.completions.create({
        model: 'acme/claude',
        messages: loop,
        tools,
      })) as WithGateway;
      expect(second.choices[0]!.message.tool_calls![0]!.id).toBe('toolu_01LRmxn9vGM1d2DZSDBowdZ1');

      const recordedInput = fixtureJson<{ content: { input: unknown }[] }>('anthropic-message-tool-use.json')
        .content[0]!.input;
      expect(mock.received).toHaveLength(2);
      const upstream = mock.received[1]!.body;
      expect(upstream.system).toBe('Use the tools.');
      expect(upstream.messages).toEqual([
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa', name: 'json', input: recordedInput },
            // Empty arguments: an empty input object.
            { type: 'tool_use', id: 'toolu_time_2', name: 'get_time', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01Q9ExVZnzZj7E2QQYHYtNUa',
              content: 'rendered 4 cities',
            },
            { type: 'tool_result', tool_use_id: 'toolu_time_2', content: '14:05' },
          ],
        },
      ]);
      expect((upstream.tools as { name: string; input_schema: unknown }[]).map((t) => t.name)).toEqual([
        'get_weather',
        'get_time',
      ]);
      expect((upstream.tools as { input_schema: unknown }[])[0]!.input_schema).toEqual(
        weatherTool.function.parameters,
      );
    });
  });

  describe('refusals and upstream failures', () => {
    it('an unknown model is 404 model_not_found, and nothing goes upstream', async () => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/does-not-exist', messages: [{ role: 'user', content: 'hi' }] },
      });
      expectError(response, 404, 'model_not_found');
      expect(response.body.error.message).toContain('acme/does-not-exist');
      expect(gw().mock.received).toHaveLength(0);
    });

    it('tools sent to a model whose capabilities.tools is false are 400 invalid_request with a clear message', async () => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: {
          model: 'acme/gpt-notools',
          messages: [{ role: 'user', content: 'hi' }],
          tools: [weatherTool],
        },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(/tool/i);
      expect(response.body.error.message).toContain('acme/gpt-notools');
      expect(gw().mock.received).toHaveLength(0);
    });

    it('a model whose only provider has no key is 503 no_provider_available', async () => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/keyless', messages: [{ role: 'user', content: 'hi' }] },
      });
      expectError(response, 503, 'no_provider_available');
      expect(gw().mock.received).toHaveLength(0);
    });

    it('a missing model is 400 invalid_request naming "model"', async () => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { messages: [{ role: 'user', content: 'hi' }] },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(/\bmodel\b/);
      expect(gw().mock.received).toHaveLength(0);
    });

    it('an empty messages array is 400 invalid_request naming "messages"', async () => {
      const tenant = await gw().newTenant();
      const response = await call(gw().url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt', messages: [] },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toMatch(/\bmessages\b/);
      expect(gw().mock.received).toHaveLength(0);
    });

    it("an Anthropic 400 (anthropic-error-400-invalid-request.json) is 400 invalid_request with the provider's message, not retried, not charged", async () => {
      const { mock, storage, url } = gw();
      const tenant = await gw().newTenant();
      const recorded = fixtureJson<{ error: { message: string } }>(
        'anthropic-error-400-invalid-request.json',
      );
      mock.enqueue(UPSTREAM.anthropic, jsonReply(recorded, 400));
      // A second reply would be served if the gateway retried.
      mock.enqueue(UPSTREAM.anthropic, jsonReply(fixtureJson('anthropic-message-tool-use.json')));

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/claude', messages: [{ role: 'user', content: 'hi' }] },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain(recorded.error.message);
      expect(response.headers.get('x-gateway-cost-usd')).toBeNull();
      expect(mock.received).toHaveLength(1);

      const requestId = response.body.error.request_id as string;
      expect(await entriesFor(storage, tenant.account.id, requestId)).toEqual([]);
      const generation = await getGeneration(url, tenant.inferenceKey, requestId);
      expect(generation.body.data).toMatchObject({ cost_micros: 0, attempts: 1, http_status: 400 });
      expect(generation.body.data.routing.failures).toEqual([
        { provider: 'anthropic', status: 400, reason: 'http_400' },
      ]);
    });

    it("an OpenAI 400 (openai-error-400-unsupported-parameter.json) is 400 invalid_request with the provider's message, not retried, not charged", async () => {
      const { mock, storage, url } = gw();
      const tenant = await gw().newTenant();
      const recorded = fixtureJson<{ error: { message: string } }>(
        'openai-error-400-unsupported-parameter.json',
      );
      mock.enqueue(UPSTREAM.openai, jsonReply(recorded, 400));
      mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/gpt', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 },
      });
      expectError(response, 400, 'invalid_request');
      expect(response.body.error.message).toContain(recorded.error.message);
      expect(mock.received).toHaveLength(1);
      expect(await entriesFor(storage, tenant.account.id, response.body.error.request_id)).toEqual([]);
      const balance = (await storage.getAccount(tenant.account.id))!.balanceMicros;
      expect(balance).toBe(10_000_000);
    });

    it('every route answering 503 is 502 upstream_error, not charged, with every try in GET /v1/generation', async () => {
      const { mock, storage, url } = gw();
      const tenant = await gw().newTenant();
      const overloaded = jsonReply({ error: { message: 'overloaded', type: 'server_error' } }, 503);
      mock.enqueue(UPSTREAM.openai, overloaded, overloaded, overloaded);
      mock.enqueue(UPSTREAM.backup, overloaded, overloaded, overloaded);

      const response = await call(url, '/v1/chat/completions', {
        key: tenant.inferenceKey,
        json: { model: 'acme/ha', messages: [{ role: 'user', content: 'hi' }] },
      });
      expectError(response, 502, 'upstream_error');
      // Three attempts per route (the default), the primary route first.
      expect(mock.received.map((r) => r.path)).toEqual([
        UPSTREAM.openai,
        UPSTREAM.openai,
        UPSTREAM.openai,
        UPSTREAM.backup,
        UPSTREAM.backup,
        UPSTREAM.backup,
      ]);
      expect(mock.received[0]!.body.model).toBe('ha-primary');
      expect(mock.received[3]!.body.model).toBe('ha-secondary');
      expect(mock.received[3]!.headers.authorization).toBe(`Bearer ${PROVIDER_KEYS.backup}`);

      const requestId = response.body.error.request_id as string;
      expect(await entriesFor(storage, tenant.account.id, requestId)).toEqual([]);
      expect((await storage.getAccount(tenant.account.id))!.balanceMicros).toBe(10_000_000);
      expect(await storage.listReservations(tenant.account.id, Date.now())).toEqual([]);

      const generation = await getGeneration(url, tenant.inferenceKey, requestId);
      expect(generation.status).toBe(200);
      expect(generation.body.data).toMatchObject({ attempts: 6, cost_micros: 0, http_status: 502 });
      expect(generation.body.data.error).toMatchObject({ code: 'upstream_error' });
      expect(generation.body.data.routing.failures).toEqual([
        { provider: 'openai', status: 503, reason: 'http_503' },
        { provider: 'openai', status: 503, reason: 'http_503 (try 2)' },
        { provider: 'openai', status: 503, reason: 'http_503 (try 3)' },
        { provider: 'backup', status: 503, reason: 'http_503' },
        { provider: 'backup', status: 503, reason: 'http_503 (try 2)' },
        { provider: 'backup', status: 503, reason: 'http_503 (try 3)' },
      ]);
    });

    it('a 503 then a success on the next route is served by the backup, with the failover trail recorded', async () => {
      const { mock, url } = gw();
      const tenant = await gw().newTenant();
      const overloaded = jsonReply({ error: { message: 'overloaded' } }, 503);
      mock.enqueue(UPSTREAM.openai, overloaded, overloaded, overloaded);
      mock.enqueue(UPSTREAM.backup, jsonReply(cachedTokensBody()));

      const completion = (await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create({
          model: 'acme/ha',
          messages: [{ role: 'user', content: 'hi' }],
        })) as WithGateway;
      expect(completion.gateway).toMatchObject({ provider: 'backup', model: 'acme/ha', attempts: 4 });
      // acme/ha on backup has no cached rate: 10122 × 0.11 = 1113.42 + 1 × 0.44 → 1113.86 → 1114.
      expect(completion.gateway.cost_micros).toBe(1114);
      const generation = await getGeneration(url, tenant.inferenceKey, completion.gateway.request_id);
      expect(generation.body.data.routing.failures.map((f: { reason: string }) => f.reason)).toEqual([
        'http_503',
        'http_503 (try 2)',
        'http_503 (try 3)',
      ]);
    });
  });

  describe('metadata labels', () => {
    it('stores the labels verbatim with HTTP-Referer and X-Title as referer and title (the body wins), visible in GET /v1/generation', async () => {
      const { mock, url } = gw();
      const tenant = await gw().newTenant();
      mock.enqueue(UPSTREAM.openai, jsonReply(cachedTokensBody()));
      const labels = {
        customer_id: 'cus_42',
        'plan.tier': 'gold:annual',
        note: '  spaces kept, ünïcödé too  ',
        title: 'Title from the body',
      };

      const completion = (await gw()
        .client(tenant.inferenceKey)
        .chat.completions.create(
          { model: 'acme/gpt', messages: [{ role: 'user', content: 'hi' }], metadata: labels },
          { headers: { 'HTTP-Referer': 'https://app.example.com/chat', 'X-Title': 'Title from the header' } },
        )) as WithGateway;

      const generation = await getGeneration(url, tenant.inferenceKey, completion.gateway.request_id);
      expect(generation.body.data.metadata).toEqual({ ...labels, referer: 'https://app.example.com/chat' });
      expect(mock.received[0]!.body).not.toHaveProperty('metadata');
    });
  });
});
