import Anthropic from '@anthropic-ai/sdk';
import { expect, it } from 'vitest';
import { chargesOf, jsonReply, settledGeneration, sseReply } from './helpers/chat-wire.js';
import { call } from './helpers/http.js';
import {
  anthropicClient,
  CLAUDE,
  CLAUDE_PRICING,
  CLAUDE_UPSTREAM,
  gatewayOf,
  micros,
  startMessagesGateway,
  UPSTREAM,
} from './helpers/messages-gateway.js';
import { describeOnEachVariant } from './helpers/start-e2e-gateway.js';
import { fixtureWireBody } from './helpers/wire-fixtures.js';

/**
 * The Messages API on an Anthropic route, through the real Node server to a recording mock on
 * loopback: the body goes upstream byte for byte but `model` (cache markers with their ttl on
 * system, message and tool blocks, signed thinking blocks, metadata), `anthropic-version` and
 * `anthropic-beta` verbatim, and the answer and every event come back as Anthropic sent them —
 * metered from Anthropic's usage with its prompt-cache lines priced as product.md says.
 */

const BETA = 'claude-code-20250219,interleaved-thinking-2025-05-14,extended-cache-ttl-2025-04-11';

/** What Claude Code sends, in its shape. */
const CLAUDE_CODE_BODY = {
  model: CLAUDE,
  max_tokens: 32000,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: 'text', text: 'Project rules: be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } },
  ],
  messages: [
    {
      role: 'user',
      content: [{ type: 'text', text: 'list the files', cache_control: { type: 'ephemeral' } }],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run ls.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgx0' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
        { type: 'tool_use', id: 'toolu_01A', name: 'Bash', input: { command: 'ls' } },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01A',
          content: 'a.txt\nb.txt',
          cache_control: { type: 'ephemeral', ttl: '5m' },
        },
      ],
    },
  ],
  tools: [
    {
      name: 'Bash',
      description: 'Run a shell command',
      input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
      cache_control: { type: 'ephemeral' },
    },
  ],
  thinking: { type: 'enabled', budget_tokens: 4000 },
  metadata: { user_id: 'user_0123abcd' },
  temperature: 1,
} as unknown as Anthropic.MessageCreateParamsNonStreaming;

/** Anthropic's answer, with a signed thinking block and every usage line. */
const ANSWER = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: CLAUDE_UPSTREAM,
  content: [
    { type: 'thinking', thinking: 'Two files.', signature: 'EqQBCgIYAhIMsig2' },
    { type: 'text', text: 'There are two files: a.txt and b.txt.' },
  ],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {
    input_tokens: 12,
    cache_creation_input_tokens: 2000,
    cache_read_input_tokens: 18000,
    output_tokens: 40,
  },
};

/** An SDK whose requests' bodies are kept as sent, to compare with what reached the upstream. */
function recordingClient(url: string, key: string, as: 'apiKey' | 'authToken' = 'apiKey') {
  const sent: string[] = [];
  const versions: (string | null)[] = [];
  const client = new Anthropic({
    baseURL: url,
    maxRetries: 0,
    // A timeout of its own, or the SDK refuses a non-streamed call with a large max_tokens.
    timeout: 20_000,
    ...(as === 'apiKey' ? { apiKey: key, authToken: null } : { apiKey: null, authToken: key }),
    fetch: async (input, init) => {
      if (typeof init?.body === 'string') sent.push(init.body);
      versions.push(new Headers(init?.headers).get('anthropic-version'));
      return fetch(input, init);
    },
  });
  return { client, sent, versions };
}

/** The body as sent with only its model changed to the route's: what must reach the upstream. */
const withUpstreamModel = (sent: string) =>
  sent.replace(`"model":${JSON.stringify(CLAUDE)}`, `"model":${JSON.stringify(CLAUDE_UPSTREAM)}`);

describeOnEachVariant(
  'Messages API: passed through to an Anthropic route',
  startMessagesGateway,
  (gw) => {
    it('messages.create: the body byte for byte but model, both headers verbatim, the answer unchanged', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      g.mock.enqueue(UPSTREAM.anthropic, jsonReply(ANSWER));
      const { client, sent, versions } = recordingClient(g.url, tenant.inferenceKey);
      const response = await client.messages
        .create(CLAUDE_CODE_BODY, { headers: { 'anthropic-beta': BETA } })
        .withResponse();
      const received = g.mock.received.at(-1)!;
      expect(received.path).toBe(UPSTREAM.anthropic);
      expect(received.rawBody).toBe(withUpstreamModel(sent[0]!));
      expect(received.rawBody).toContain('"cache_control":{"type":"ephemeral","ttl":"1h"}');
      expect(versions[0]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(received.headers['anthropic-version']).toBe(versions[0]);
      expect(received.headers['anthropic-beta']).toBe(BETA);
      expect(received.headers['x-api-key']).toBe('sk-ant-upstream');
      expect(received.headers.authorization).toBeUndefined();

      const { gateway, ...answer } = response.data as unknown as typeof ANSWER & { gateway: unknown };
      expect(answer).toEqual(ANSWER);
      const expected = micros(CLAUDE_PRICING, { input: 12, cacheWrite: 2000, cacheRead: 18000, output: 40 });
      expect(gatewayOf({ gateway }).cost_micros).toBe(expected);
      expect(response.response.headers.get('x-gateway-cost-usd')).toBe((expected / 1e6).toFixed(6));
      const record = await settledGeneration(g.url, tenant.inferenceKey, gatewayOf({ gateway }).request_id);
      expect(record).toMatchObject({
        endpoint: 'messages',
        provider: 'anthropic',
        usage: { prompt_tokens: 12 + 2000 + 18000, cached_tokens: 18000, completion_tokens: 40 },
        cost_micros: expected,
      });
      expect((await chargesOf(g.storage, tenant.account.id)).map((e) => -e.amountMicros)).toEqual([expected]);
    });

    it('the provider’s default anthropic-version only when the client sent none; no beta it did not send', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      g.mock.enqueue(UPSTREAM.anthropic, jsonReply(ANSWER), jsonReply(ANSWER));
      const body = { model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
      const headers = { 'x-api-key': tenant.inferenceKey };
      await call(g.url, '/v1/messages', { json: body, headers });
      expect(g.mock.received.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
      expect(g.mock.received.at(-1)!.headers).not.toHaveProperty('anthropic-beta');
      await call(g.url, '/v1/messages', {
        json: body,
        headers: { ...headers, 'anthropic-version': '2024-01-01' },
      });
      expect(g.mock.received.at(-1)!.headers['anthropic-version']).toBe('2024-01-01');
    });

    it.each([
      'anthropic-stream-cache-read.chunks.txt',
      'anthropic-stream-text-then-tool-use.chunks.txt',
      'anthropic-stream-tool-use-no-args.chunks.txt',
    ])(
      '%s: every event comes back exactly as sent, nothing added; charged from its usage',
      async (fixture) => {
        const g = gw();
        const tenant = await g.newTenant();
        g.mock.enqueue(UPSTREAM.anthropic, sseReply(fixture));
        const response = await fetch(`${g.url}/v1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.inferenceKey}`, 'anthropic-beta': BETA },
          body: JSON.stringify({ ...CLAUDE_CODE_BODY, stream: true }),
        });
        expect(response.status).toBe(200);
        expect(await response.text()).toBe(fixtureWireBody(fixture));
        expect(g.mock.received.at(-1)!.headers['anthropic-beta']).toBe(BETA);
        const requestId = response.headers.get('x-gateway-request-id')!;
        const record = await settledGeneration(g.url, tenant.inferenceKey, requestId);
        expect(record).toMatchObject({ endpoint: 'messages', stream: true, status: 'success' });
        if (fixture.includes('cache-read')) expect(record.usage.cached_tokens).toBe(18639);
      },
    );

    it('messages.stream (authToken) → finalMessage() of a recorded stream with a tool call', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      g.mock.enqueue(UPSTREAM.anthropic, sseReply('anthropic-stream-text-then-tool-use.sse'));
      const message = await anthropicClient(g.url, tenant.inferenceKey, 'authToken')
        .messages.stream({ ...CLAUDE_CODE_BODY })
        .finalMessage();
      expect(message.content).toEqual([
        { type: 'text', text: "I'll check the current weather in Paris for you." },
        {
          type: 'tool_use',
          id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
          name: 'get_weather',
          input: { location: 'Paris' },
        },
      ]);
      expect(message.usage.input_tokens).toBe(377);
    });

    it('a provider’s own error event mid-stream passes as it is, and ends the stream', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      const wire = fixtureWireBody('anthropic-stream-cache-read.chunks.txt').split('\n\n').slice(0, 3);
      const error =
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
      g.mock.enqueue(UPSTREAM.anthropic, { kind: 'sse', events: [...wire.map((e) => `${e}\n\n`), error] });
      const response = await fetch(`${g.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': tenant.inferenceKey },
        body: JSON.stringify({ ...CLAUDE_CODE_BODY, stream: true }),
      });
      expect(await response.text()).toBe(`${wire.join('\n\n')}\n\n${error}`);
    });

    it('an upstream 529 is retried and failed over; all 529 → 529 overloaded_error to the SDK', async () => {
      const g = gw();
      const tenant = await g.newTenant();
      const overloaded = jsonReply(
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        529,
      );
      g.mock.enqueue(UPSTREAM.anthropic, overloaded, overloaded, overloaded);
      g.mock.enqueue(UPSTREAM.spare, overloaded, jsonReply(ANSWER));
      const client = anthropicClient(g.url, tenant.inferenceKey);
      const served = await client.messages.create(CLAUDE_CODE_BODY);
      expect(gatewayOf(served)).toMatchObject({ provider: 'spare', attempts: 5 });

      g.mock.reset();
      g.mock.setDefault(UPSTREAM.anthropic, overloaded);
      g.mock.setDefault(UPSTREAM.spare, overloaded);
      const failed = await client.messages.create(CLAUDE_CODE_BODY).catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(Anthropic.APIError);
      expect((failed as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
      expect((failed as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'overloaded_error', message: expect.stringMatching(/^upstream_error: /) },
      });
      expect(await chargesOf(g.storage, tenant.account.id)).toHaveLength(1);
    });

    it('messages.countTokens is forwarded to the route’s count_tokens: not charged, not recorded, no rpm hit', async () => {
      const g = gw();
      const tenant = await g.newTenant({ defaultRpm: 1 });
      g.mock.enqueue(
        UPSTREAM.countTokens,
        jsonReply({ input_tokens: 2095 }),
        jsonReply({ input_tokens: 2095 }),
      );
      const { client, sent } = recordingClient(g.url, tenant.inferenceKey);
      const { max_tokens: _max, ...countable } = CLAUDE_CODE_BODY;
      const params = countable as unknown as Anthropic.MessageCountTokensParams;
      expect(await client.messages.countTokens(params, { headers: { 'anthropic-beta': BETA } })).toEqual({
        input_tokens: 2095,
      });
      // A second count with an rpm of 1: count_tokens is not a model call.
      expect((await client.messages.countTokens(params)).input_tokens).toBe(2095);
      const received = g.mock.received.filter((r) => r.path === UPSTREAM.countTokens);
      expect(received).toHaveLength(2);
      expect(received[0]!.rawBody).toBe(withUpstreamModel(sent[0]!));
      expect(received[0]!.headers['anthropic-beta']).toBe(BETA);
      expect(await chargesOf(g.storage, tenant.account.id)).toEqual([]);
      const listed = await call(g.url, '/v1/generations', { key: tenant.inferenceKey });
      expect(listed.body.data).toEqual([]);
    });
  },
  (g) => g.mock.reset(),
);
