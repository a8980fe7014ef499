import { expect, it } from 'vitest';
import {
  describeOnEachInferenceStorage,
  expectCharged,
  type Json,
  openAIError,
  requestIdOf,
} from '../helpers/inference-wire.js';
import { openAiCompletion } from '../helpers/records-wire.js';
import {
  eventByEvent,
  nativeStreamBodies,
  nativeTextAnswer,
  parseEvents,
  readResponsesStream,
  responsesConfig,
} from '../helpers/responses-wire.js';

/**
 * `POST /v1/responses` on native routes (a provider with `responses: true`), in-process: the
 * Responses body goes to `{base_url}/responses` as the caller wrote it (model, gateway fields,
 * `store: false`, the held ceiling), the answer and the events come back unchanged but for the
 * `gateway` object, and the charge is the upstream's `usage` (cached input at `cached_prompt`).
 */
describeOnEachInferenceStorage(
  'POST /v1/responses on a native route',
  (gw) => {
    const post = (body: unknown, key: string, headers?: Record<string, string>) =>
      gw().post('/v1/responses', body, key, headers);

    it('sends the Responses body to /responses and passes the Response back with the gateway object, priced from usage', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('p2', nativeTextAnswer({ input: 1_000, cached: 800, output: 10 }));
      const wire = {
        model: 'acme/native',
        input: [{ role: 'user', content: 'Weather in SF?' }],
        include: ['reasoning.encrypted_content'],
        tools: [{ type: 'web_search' }, { type: 'mcp', server_label: 'x', server_url: 'https://mcp.test' }],
        metadata: { team: 'agents' },
        store: true,
        models: ['acme/native'],
      };
      const response = await post(wire, tenant.inferenceKey);
      // Hosted tools go natively: nothing is removed.
      expect(response.headers.get('x-gateway-dropped-tools')).toBeNull();
      // 200 uncached × 1 + 800 cached × 0.25 + 10 × 2 = 420 micros.
      const { body, record } = await expectCharged(gw(), tenant, response, {
        costMicros: 420,
        costUsd: '0.000420',
        model: 'acme/native',
        provider: 'p2',
      });
      const { gateway, ...answer } = body;
      expect(answer).toEqual(nativeTextAnswer({ input: 1_000, cached: 800, output: 10 }));
      expect(gateway.request_id).toBe(requestIdOf(response));
      expect(record).toMatchObject({
        endpoint: 'responses',
        usage: { prompt_tokens: 1_000, cached_tokens: 800 },
      });
      const [call, ...more] = gw().upstream.calls;
      expect(more).toEqual([]);
      expect(call!.url).toBe('http://upstream.test/p2/v1/responses');
      expect(call!.headers.authorization).toBe('Bearer sk-p2');
      expect(call!.body).toEqual({
        model: 'gpt-5-mini',
        input: [{ role: 'user', content: 'Weather in SF?' }],
        include: ['reasoning.encrypted_content'],
        tools: [{ type: 'web_search' }, { type: 'mcp', server_label: 'x', server_url: 'https://mcp.test' }],
        metadata: { team: 'agents' },
        store: false,
        max_output_tokens: 200,
      });
    });

    it('streams the upstream’s events unchanged, each read as it came; the held-back completed event gains gateway', async () => {
      const tenant = await gw().newTenant();
      const [, , , text] = nativeStreamBodies('openai-responses-reasoning-tool-loop.chunks.txt');
      gw().upstream.on('p2', () => eventByEvent(text!));
      const response = await post(
        { model: 'acme/native', input: 'What is the result?', stream: true },
        tenant.inferenceKey,
      );
      expect(response.status).toBe(200);
      const read = readResponsesStream(await response.text());
      const sent = parseEvents(text!);
      expect(read.events.slice(0, -1)).toEqual(sent.slice(0, -1));
      // 299 input × 1 + 12 output × 2 = 323 micros.
      expect(read.terminal).toEqual({
        ...sent.at(-1)!.data.response,
        gateway: expect.objectContaining({ request_id: requestIdOf(response), cost_micros: 323 }),
      });
      expect(gw().upstream.calls[0]!.body).toMatchObject({ stream: true, store: false });
      expect(await gw().charges(tenant.account.id)).toMatchObject([{ amountMicros: -323 }]);
      expect(await gw().generation(requestIdOf(response), tenant.inferenceKey)).toMatchObject({
        endpoint: 'responses',
        stream: true,
        status: 'success',
        finish_reason: 'stop',
      });
    });

    it('an upstream that fails after the first byte ends in response.failed with its code, charged as a broken stream', async () => {
      const tenant = await gw().newTenant();
      const [failing] = nativeStreamBodies('openai-responses-error-insufficient-quota.chunks.txt');
      gw().upstream.on('p2', () => eventByEvent(failing!));
      const response = await post({ model: 'acme/native', input: 'Hi', stream: true }, tenant.inferenceKey);
      const read = readResponsesStream(await response.text());
      expect(read.events.map((e) => e.data.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.failed',
      ]);
      expect(read.terminal).toMatchObject({ status: 'failed', error: { code: 'insufficient_quota' } });
      const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
      expect(record).toMatchObject({ status: 'broken_stream', endpoint: 'responses' });
      expect(read.terminal.gateway.cost_micros).toBe(record.cost_micros);
    });

    it('fails over from a native route to a translated one; the dropped tools are named only when the translated one served', async () => {
      const tenant = await gw().newTenant();
      const tools = [{ type: 'function', name: 'f' }, { type: 'image_generation' }];
      gw().upstream.on('p2', openAIError(503));
      gw().upstream.on('p1', openAiCompletion({ text: 'From chat.', usage: { prompt: 10, completion: 2 } }));
      const failedOver = await post({ model: 'acme/mixed', input: 'Hi', tools }, tenant.inferenceKey);
      const body = (await failedOver.json()) as Json;
      expect(failedOver.status, JSON.stringify(body)).toBe(200);
      expect(body.output[0].content[0].text).toBe('From chat.');
      expect(body.gateway).toMatchObject({ provider: 'p1', attempts: 2 });
      expect(failedOver.headers.get('x-gateway-dropped-tools')).toBe('image_generation');
      expect(gw().upstream.calls.map((c) => `${c.provider}${c.path}`)).toEqual([
        'p2/responses',
        'p1/chat/completions',
      ]);

      gw().upstream.on('p2', nativeTextAnswer());
      const native = await post({ model: 'acme/mixed', input: 'Hi', tools }, tenant.inferenceKey);
      expect(native.status).toBe(200);
      expect(native.headers.get('x-gateway-dropped-tools')).toBeNull();
      expect(gw().upstream.calls.at(-1)!.body.tools).toEqual(tools);
    });

    it('an output guardrail reads a native Response’s output: 422, charged for the tokens', async () => {
      const tenant = await gw().newTenant();
      const rule = await gw().post(
        '/v1/guardrails',
        { name: 'no SF', stage: 'output', category: 'keyword', pattern: 'San Francisco' },
        tenant.provisioningKey,
      );
      expect(rule.status).toBe(201);
      gw().upstream.on('p2', nativeTextAnswer({ input: 14, cached: 0, output: 50 }));
      const response = await post({ model: 'acme/native', input: 'Weather in SF?' }, tenant.inferenceKey);
      expect(response.status).toBe(422);
      expect(((await response.json()) as Json).error.code).toBe('guardrail_blocked');
      expect(await gw().charges(tenant.account.id)).toMatchObject([{ amountMicros: -(14 + 50 * 2) }]);

      const [, , , text] = nativeStreamBodies('openai-responses-reasoning-tool-loop.chunks.txt');
      await gw().post(
        '/v1/guardrails',
        { name: 'no 570', stage: 'output', category: 'keyword', pattern: '570' },
        tenant.provisioningKey,
      );
      gw().upstream.on('p2', () => eventByEvent(text!));
      const streamed = await post(
        { model: 'acme/native', input: 'Result?', stream: true },
        tenant.inferenceKey,
      );
      const read = readResponsesStream(await streamed.text());
      expect(read.terminal).toMatchObject({ status: 'failed', error: { code: 'invalid_prompt' } });
      expect(read.events.some((e) => e.data.delta === '570')).toBe(false);
    });

    it('an upstream refusal before the first byte is the gateway’s usual envelope', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('p2', openAIError(400, 'Unsupported parameter: temperature'));
      const response = await post({ model: 'acme/native', input: 'Hi', temperature: 2 }, tenant.inferenceKey);
      const body = (await response.json()) as Json;
      expect(response.status).toBe(400);
      expect(body.error).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('Unsupported parameter: temperature'),
        request_id: requestIdOf(response),
      });
      expect(await gw().charges(tenant.account.id)).toEqual([]);
    });
  },
  responsesConfig,
);
