import { expect, it } from 'vitest';
import {
  chatStreamAnswer,
  describeOnEachInferenceStorage,
  expectCharged,
  expectRefused,
  type Json,
  requestIdOf,
} from '../helpers/inference-wire.js';
import { anthropicMessage, openAiCompletion } from '../helpers/records-wire.js';
import { readResponsesStream, responsesConfig } from '../helpers/responses-wire.js';
import { exaAnswer } from '../web-search/web-search-config.js';

/**
 * `POST /v1/responses` on translated routes, in-process (product.md `POST /v1/responses`): the
 * Responses request becomes a chat call on the route's provider (OpenAI-format chat, Anthropic), its
 * answer a Response; the same metered call as chat — the hold on `max_output_tokens`, one charge,
 * a record with `endpoint: "responses"`.
 */
describeOnEachInferenceStorage(
  'POST /v1/responses on a translated route',
  (gw) => {
    const post = (body: unknown, key: string, headers?: Record<string, string>) =>
      gw().post('/v1/responses', body, key, headers);

    it('answers a Response from the chat call, charges its usage once, and records endpoint responses', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on(
        'p1',
        openAiCompletion({ text: 'Hello there!', usage: { prompt: 40, completion: 10, cached: 32 } }),
      );
      const response = await post(
        {
          model: 'acme/chat',
          instructions: 'Be brief.',
          input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
          max_output_tokens: 50,
          temperature: 0.3,
          metadata: { team: 'agents' },
          store: true,
        },
        tenant.inferenceKey,
      );
      // 8 uncached × 1 + 32 cached × 0.25 + 10 × 2 = 36 micros (within the request's hold).
      const { body, record } = await expectCharged(gw(), tenant, response, {
        costMicros: 36,
        costUsd: '0.000036',
        model: 'acme/chat',
        provider: 'p1',
      });
      const requestId = requestIdOf(response);
      expect(body).toMatchObject({
        id: `resp_${requestId.slice('req_'.length)}`,
        object: 'response',
        status: 'completed',
        model: 'acme/chat',
        instructions: 'Be brief.',
        max_output_tokens: 50,
        temperature: 0.3,
        metadata: { team: 'agents' },
        store: false,
        error: null,
        incomplete_details: null,
        previous_response_id: null,
        usage: {
          input_tokens: 40,
          input_tokens_details: { cached_tokens: 32 },
          output_tokens: 10,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 50,
        },
      });
      expect(body.output).toEqual([
        {
          type: 'message',
          id: expect.stringMatching(/^msg_/),
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello there!', annotations: [], logprobs: [] }],
        },
      ]);
      expect(record).toMatchObject({
        endpoint: 'responses',
        stream: false,
        usage: { prompt_tokens: 40, completion_tokens: 10, cached_tokens: 32 },
        metadata: { team: 'agents' },
      });
      // Upstream: a chat call, the ceiling in the provider's field, no Responses-only field.
      const [call, ...more] = gw().upstream.calls;
      expect(more).toEqual([]);
      expect(call!.url).toBe('http://upstream.test/p1/v1/chat/completions');
      expect(call!.body).toEqual({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        ],
        max_completion_tokens: 50,
        temperature: 0.3,
      });
    });

    it('a function-tool round trip: the call comes back as a function_call item, its output goes up as a tool message', async () => {
      const tenant = await gw().newTenant();
      const tools = [
        {
          type: 'function',
          name: 'get_weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      ];
      gw().upstream.on(
        'p1',
        openAiCompletion({
          text: '',
          toolCall: { id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
          usage: { prompt: 20, completion: 8 },
        }),
        openAiCompletion({ text: 'It is sunny.', usage: { prompt: 40, completion: 4 } }),
      );
      const first = (await (
        await post({ model: 'acme/chat', input: 'Weather in Paris?', tools }, tenant.inferenceKey)
      ).json()) as Json;
      expect(first.output).toEqual([
        {
          type: 'function_call',
          id: expect.stringMatching(/^fc_/),
          status: 'completed',
          call_id: 'call_abc',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
        },
      ]);
      expect(first.tools).toEqual([{ ...tools[0], description: null, strict: null }]);
      const second = (await (
        await post(
          {
            model: 'acme/chat',
            input: [
              { role: 'user', content: 'Weather in Paris?' },
              ...first.output,
              { type: 'function_call_output', call_id: 'call_abc', output: '{"sky":"sunny"}' },
            ],
            tools,
          },
          tenant.inferenceKey,
        )
      ).json()) as Json;
      expect(second.output[0].content[0].text).toBe('It is sunny.');
      expect(gw().upstream.calls[1]!.body.messages).toEqual([
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_abc',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_abc', content: '{"sky":"sunny"}' },
      ]);
    });

    it('a custom tool goes up as a one-string function and comes back as a custom_tool_call', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on(
        'p1',
        openAiCompletion({
          text: '',
          toolCall: {
            id: 'call_p',
            name: 'apply_patch',
            arguments: '{"input":"*** Begin Patch\\n*** End Patch"}',
          },
          usage: { prompt: 20, completion: 8 },
        }),
      );
      const response = await post(
        {
          model: 'acme/chat',
          input: 'Fix the typo',
          tools: [
            { type: 'custom', name: 'apply_patch', description: 'Edit files', format: { type: 'text' } },
          ],
          tool_choice: { type: 'custom', name: 'apply_patch' },
        },
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(body.output).toEqual([
        {
          type: 'custom_tool_call',
          id: expect.stringMatching(/^ctc_/),
          status: 'completed',
          call_id: 'call_p',
          name: 'apply_patch',
          input: '*** Begin Patch\n*** End Patch',
        },
      ]);
      const sent = gw().upstream.calls[0]!.body;
      expect(sent.tools[0].function.parameters.required).toEqual(['input']);
      expect(sent.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } });
    });

    it('on Anthropic too: the request as a Messages call, the answer as a Response', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('an', anthropicMessage({ text: 'Bonjour.', usage: { prompt: 30, completion: 5 } }));
      const response = await post(
        { model: 'acme/claude', input: 'Say hello in French', instructions: 'Be brief.' },
        tenant.inferenceKey,
      );
      // 30 × 3 + 5 × 15 = 165 micros.
      const { body } = await expectCharged(gw(), tenant, response, {
        costMicros: 165,
        costUsd: '0.000165',
        model: 'acme/claude',
        provider: 'an',
      });
      expect(body.output[0].content[0].text).toBe('Bonjour.');
      const call = gw().upstream.calls[0]!;
      expect(call.path).toBe('/messages');
      expect(call.body).toMatchObject({ model: 'claude-sonnet-4-5', system: 'Be brief.', max_tokens: 100 });
    });

    it('streams Responses events from the chat stream, the charge on response.completed', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on(
        'p1',
        chatStreamAnswer({ text: 'Hello from a stream.', usage: { prompt: 12, completion: 5 } }),
      );
      const response = await post({ model: 'acme/chat', input: 'Hi', stream: true }, tenant.inferenceKey);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const read = readResponsesStream(await response.text());
      expect(read.terminal).toMatchObject({
        status: 'completed',
        usage: { input_tokens: 12, output_tokens: 5 },
        gateway: { request_id: requestIdOf(response), cost_micros: 22 },
      });
      expect(read.terminal.output[0].content[0].text).toBe('Hello from a stream.');
      expect(await gw().charges(tenant.account.id)).toMatchObject([{ amountMicros: -22 }]);
      expect(await gw().generation(requestIdOf(response), tenant.inferenceKey)).toMatchObject({
        endpoint: 'responses',
        stream: true,
        status: 'success',
        cost_micros: 22,
      });
      expect(gw().upstream.calls[0]!.body).toMatchObject({
        stream: true,
        stream_options: { include_usage: true },
      });
    });

    it('holds max_output_tokens like max_tokens: a ceiling the credit cannot cover is 402, nothing sent', async () => {
      // 100,000 output tokens × 2 USD per M = 0.2 USD > 0.1 USD of credit.
      const tenant = await gw().newTenant(100_000);
      const response = await post(
        { model: 'acme/chat', input: 'Hi', max_output_tokens: 100_000 },
        tenant.inferenceKey,
      );
      await expectRefused(gw(), tenant, response, {
        status: 402,
        code: 'insufficient_credit',
        endpoint: 'responses',
      });
      const served = await post({ model: 'acme/chat', input: 'Hi' }, tenant.inferenceKey);
      expect(served.status).toBe(200);
      // Without one, the model's ceiling was held and sent in the provider's field.
      expect(gw().upstream.calls[0]!.body.max_completion_tokens).toBe(100);
    });

    it('an answer cut at the ceiling is incomplete with reason max_output_tokens', async () => {
      const tenant = await gw().newTenant();
      const cut = openAiCompletion({ text: 'Hel', usage: { prompt: 5, completion: 1 } }) as Json;
      cut.choices[0].finish_reason = 'length';
      gw().upstream.on('p1', cut);
      const body = (await (
        await post({ model: 'acme/chat', input: 'Hi', max_output_tokens: 1 }, tenant.inferenceKey)
      ).json()) as Json;
      expect(body).toMatchObject({
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        completed_at: null,
        output: [{ status: 'incomplete' }],
      });
    });

    it('removes hosted tools it cannot serve and names them in X-Gateway-Dropped-Tools', async () => {
      const tenant = await gw().newTenant();
      const response = await post(
        {
          model: 'acme/chat',
          input: 'Hi',
          tools: [
            { type: 'function', name: 'f' },
            { type: 'mcp', server_label: 'x', server_url: 'https://mcp.test' },
            { type: 'code_interpreter', container: { type: 'auto' } },
          ],
        },
        tenant.inferenceKey,
      );
      expect(response.status).toBe(200);
      expect(response.headers.get('x-gateway-dropped-tools')).toBe('mcp,code_interpreter');
      const body = (await response.json()) as Json;
      expect(body.tools.map((tool: Json) => tool.type)).toEqual(['function']);
      expect(gw().upstream.calls[0]!.body.tools).toEqual([{ type: 'function', function: { name: 'f' } }]);
    });

    it('web_search runs the gateway’s web plugin (its fee charged) instead of going upstream as a tool', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer());
      const response = await post(
        { model: 'acme/chat', input: 'Node news?', tools: [{ type: 'web_search_preview' }] },
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(response.headers.get('x-gateway-dropped-tools')).toBeNull();
      // The configured price per search (the default 0.007 USD), not the backend's reported 0.005.
      expect(body.gateway.cost_breakdown.web_search_micros).toBe(7_000);
      const chat = gw().upstream.callsTo('p1')[0]!;
      expect(chat.body.tools).toBeUndefined();
      expect(JSON.stringify(chat.body.messages)).toContain('Node.js 24 released');
    });

    it.each([
      ['previous_response_id', { previous_response_id: 'resp_1' }, /stateless/],
      ['conversation', { conversation: 'conv_1' }, /stateless/],
      ['background: true', { background: true }, /stateless/],
      [
        'a tool_choice naming a removed tool',
        { tools: [{ type: 'file_search' }], tool_choice: { type: 'file_search' } },
        /removed/,
      ],
      [
        'a tool_choice naming a tool not in tools',
        { tool_choice: { type: 'function', name: 'nope' } },
        /not in tools/,
      ],
      ['an item the gateway cannot read', { input: [{ type: 'function_call', name: 'f' }] }, /input\[0\]/],
      ['an input that is neither text nor items', { input: 42 }, /body\.input/],
      ['an empty list of items', { input: [] }, /body\.input/],
    ])('%s is 400 invalid_request, recorded and not charged', async (_, fields, message) => {
      const tenant = await gw().newTenant();
      const response = await post({ model: 'acme/chat', input: 'Hi', ...fields }, tenant.inferenceKey);
      const { error } = await expectRefused(gw(), tenant, response, {
        status: 400,
        code: 'invalid_request',
        endpoint: 'responses',
      });
      expect(error.message).toMatch(message);
    });

    it('GET /v1/responses/{id} is 404 whatever the key: nothing is kept', async () => {
      const tenant = await gw().newTenant();
      const response = await gw().get('/v1/responses/resp_123', tenant.inferenceKey);
      expect(response.status).toBe(404);
      expect(((await response.json()) as Json).error).toMatchObject({
        code: 'not_found',
        message: expect.stringMatching(/stateless/),
      });
      // With a provisioning key, or none: nothing a key could unlock.
      expect((await gw().get('/v1/responses/resp_123', tenant.provisioningKey)).status).toBe(404);
      expect((await gw().get('/v1/responses/resp_123', null)).status).toBe(404);
    });

    it('the response cache answers a Response of this request’s own (new ids), as JSON and as a stream', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on(
        'p1',
        openAiCompletion({ text: 'Cached words.', usage: { prompt: 10, completion: 3 } }),
      );
      const cached = { 'x-gateway-cache': 'true' };
      const body = { model: 'acme/chat', input: 'Hi', metadata: { run: '1' } };
      const miss = (await (await post(body, tenant.inferenceKey, cached)).json()) as Json;
      const hit = await post({ ...body, metadata: { run: '2' } }, tenant.inferenceKey, cached);
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      const again = (await hit.json()) as Json;
      expect(again.id).toBe(`resp_${requestIdOf(hit).slice('req_'.length)}`);
      expect(again.id).not.toBe(miss.id);
      expect(again.output[0].id).not.toBe(miss.output[0].id);
      expect(again.output[0].content).toEqual(miss.output[0].content);
      expect(again.metadata).toEqual({ run: '2' });
      expect(again.gateway).toMatchObject({ cost_micros: 0, waived: 'cache hit' });

      const streamed = await post({ ...body, stream: true }, tenant.inferenceKey, cached);
      expect(streamed.headers.get('x-gateway-cache')).toBe('HIT');
      const read = readResponsesStream(await streamed.text());
      expect(read.terminal.output[0].content[0].text).toBe('Cached words.');
      expect(read.terminal.gateway).toMatchObject({ cost_micros: 0, waived: 'cache hit' });
      expect(gw().upstream.calls).toHaveLength(1);
    });

    it('a preset applies: its model and parameters, its system before the request’s instructions', async () => {
      const tenant = await gw().newTenant();
      const created = await gw().post(
        '/v1/presets',
        {
          name: 'support',
          config: { model: 'acme/chat', system: 'You are a support bot.', temperature: 0.1 },
        },
        tenant.provisioningKey,
      );
      expect(created.status).toBe(201);
      const response = await post(
        { model: '@preset/support', input: 'Hi', instructions: 'Be brief.' },
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body).toMatchObject({
        model: 'acme/chat',
        instructions: 'You are a support bot.\n\nBe brief.',
        temperature: 0.1,
      });
      expect(gw().upstream.calls[0]!.body).toMatchObject({
        messages: [
          { role: 'system', content: 'You are a support bot.\n\nBe brief.' },
          { role: 'user', content: 'Hi' },
        ],
        temperature: 0.1,
      });
      expect(await gw().generation(requestIdOf(response), tenant.inferenceKey)).toMatchObject({
        preset: 'support',
      });
    });

    it('Idempotency-Key: a repeat is the first answer, charged once', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('p1', openAiCompletion({ text: 'Once.', usage: { prompt: 10, completion: 3 } }));
      const headers = { 'idempotency-key': 'resp-once' };
      const first = (await (
        await post({ model: 'acme/chat', input: 'Hi' }, tenant.inferenceKey, headers)
      ).json()) as Json;
      const second = (await (
        await post({ model: 'acme/chat', input: 'Hi' }, tenant.inferenceKey, headers)
      ).json()) as Json;
      expect(second).toEqual(first);
      expect(await gw().charges(tenant.account.id)).toHaveLength(1);
      expect(gw().upstream.calls).toHaveLength(1);
    });
  },
  responsesConfig,
);
