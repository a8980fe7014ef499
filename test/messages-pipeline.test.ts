import SwaggerParser from '@apidevtools/swagger-parser';
import { createTestGateway, type FakeUpstream, type TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accumulateEvents,
  grammarViolations,
  parseEvents,
} from '../packages/core/src/operations/messages/anthropic-grammar.test-support.js';
import { expectAnthropicError } from './helpers/http.js';
import { CLAUDE, CLAUDE_UPSTREAM, DEMO, GPT, messagesConfigInput } from './helpers/messages-gateway.js';
import { createTenant } from './helpers/tenant.js';
import { fixtureWireBody } from './helpers/wire-fixtures.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

/**
 * `POST /v1/messages` through `gateway.fetch` in-process: the same metered call as chat — auth from
 * either header, Anthropic's error body for every failure, the hold on `max_tokens`, the rate
 * limit, the record (`endpoint: "messages"`), the response cache in the Messages shape (streamed or
 * not), `Idempotency-Key`, presets, output guardrails — on the demo model (translated) and on an
 * Anthropic route answered by a scripted upstream (passed through).
 */

const ANSWER = {
  id: 'msg_up',
  type: 'message',
  role: 'assistant',
  model: CLAUDE_UPSTREAM,
  content: [{ type: 'text', text: 'Hello.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 },
};
let gw: TestGateway;
/** What the scripted upstreams answer from now on (ANSWER unless a test says otherwise). */
function nextAnswer(script: (upstream: FakeUpstream) => void) {
  for (const provider of ['anthropic', 'openai']) gw.upstream(provider).always(script);
}
/** What the scripted Anthropic upstream received. */
const received = () => gw.upstream('anthropic').calls as { url: string; body: Json }[];
beforeAll(async () => {
  gw = await createTestGateway(messagesConfigInput('http://upstream.test'));
  nextAnswer((u) => u.reply(200, ANSWER));
});
afterAll(() => gw?.close());

/** `POST <path>` with the key as `x-api-key` (or the given headers instead). */
async function post(body: unknown, headers: Record<string, string> | null = null, path = '/v1/messages') {
  const response = await gw.gateway.fetch(
    new Request(`http://gateway.test${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(headers ?? { 'x-api-key': gw.key }) },
      body: JSON.stringify(body),
    }),
  );
  const text = await response.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

const hello = (model = DEMO, extra: Json = {}) => ({
  model,
  max_tokens: 200,
  messages: [{ role: 'user', content: 'Say hello.' }],
  ...extra,
});

describe('Messages API - auth and errors in Anthropic’s body', () => {
  it('the key from x-api-key or Authorization: Bearer; none → 401 authentication_error', async () => {
    expect((await post(hello())).status).toBe(200);
    expect((await post(hello(), { authorization: `Bearer ${gw.key}` })).status).toBe(200);
    expectAnthropicError(await post(hello(), {}), 401, 'unauthenticated', 'authentication_error');
    expectAnthropicError(
      await post(hello(), { 'x-api-key': '' }),
      401,
      'unauthenticated',
      'authentication_error',
    );
  });

  it('two different keys → 401 invalid_api_key; a provisioning key → 403 permission_error', async () => {
    const other = await createTenant(gw.storage);
    expectAnthropicError(
      await post(hello(), {
        'x-api-key': gw.key,
        authorization: `Bearer ${other.inferenceKey}`,
      }),
      401,
      'invalid_api_key',
      'authentication_error',
    );
    expectAnthropicError(
      await post(hello(), { 'x-api-key': gw.provisioningKey }),
      403,
      'wrong_key_scope',
      'permission_error',
    );
  });

  it('a body that is not a Messages request → 400 invalid_request_error, recorded as a refusal', async () => {
    const refused = await post({ model: DEMO, messages: [{ role: 'user', content: 'x' }] });
    expectAnthropicError(refused, 400, 'invalid_request', 'invalid_request_error');
    expect(refused.json.error.message).toContain('body.max_tokens');
    const record = await gw.storage.getRequestRecord(gw.accountId, refused.json.request_id);
    expect(record).toMatchObject({
      endpoint: 'messages',
      status: 'refused',
      errorCode: 'invalid_request',
      costMicros: 0,
    });
  });

  it('Anthropic’s metadata is not read as the gateway’s labels: a long user_id is answered, and passed through', async () => {
    const userId = JSON.stringify({ device_id: 'd'.repeat(300), session_id: 's' });
    expect((await post(hello(DEMO, { metadata: { user_id: userId } }))).status).toBe(200);
    const passed = await post(hello(CLAUDE, { metadata: { user_id: userId } }));
    expect(passed.status, passed.text).toBe(200);
    expect(received().at(-1)!.body.metadata).toEqual({ user_id: userId });
  });

  it('an unknown model → 404 not_found_error', async () => {
    expectAnthropicError(await post(hello('acme/nobody')), 404, 'model_not_found', 'not_found_error');
  });

  it('the hold covers max_tokens: a ceiling the credit cannot cover → 402 billing_error, nothing charged', async () => {
    const poor = await createTenant(gw.storage, { creditMicros: 100_000 });
    const headers = { 'x-api-key': poor.inferenceKey };
    const calls = received().length;
    // 64,000 output tokens at $15 per million is $0.96, more than the $0.10 of credit.
    expectAnthropicError(
      await post(hello(CLAUDE, { max_tokens: 64000 }), headers),
      402,
      'insufficient_credit',
      'billing_error',
    );
    expect(received()).toHaveLength(calls);
    expect((await post(hello(CLAUDE, { max_tokens: 100 }), headers)).status).toBe(200);
  });

  it('the rate limit counts Messages calls: 429 rate_limit_error with Retry-After', async () => {
    const limited = await createTenant(gw.storage, { defaultRpm: 1 });
    const headers = { 'x-api-key': limited.inferenceKey };
    expect((await post(hello(), headers)).status).toBe(200);
    const refused = await post(hello(), headers);
    expectAnthropicError(refused, 429, 'rate_limited', 'rate_limit_error');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('Messages API - the pipeline’s features, in the Messages shape', () => {
  it('the response cache: a hit answers the same Messages body, as JSON and as a stream of Anthropic events', async () => {
    const cache = { 'x-api-key': gw.key, 'x-gateway-cache': 'true' };
    const body = hello(DEMO, { messages: [{ role: 'user', content: 'Cache me.' }] });
    const miss = await post(body, cache);
    expect(miss.headers.get('x-gateway-cache')).toBe('MISS');
    const hit = await post(body, cache);
    expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
    const { gateway: _m, ...missAnswer } = miss.json;
    const { gateway, ...hitAnswer } = hit.json;
    expect(hitAnswer).toEqual(missAnswer);
    expect(gateway).toMatchObject({ cost_micros: 0, waived: 'cache hit' });

    const streamed = await post({ ...body, stream: true }, cache);
    expect(streamed.headers.get('x-gateway-cache')).toBe('HIT');
    const events = parseEvents(streamed.text);
    expect(grammarViolations(events)).toEqual([]);
    expect(accumulateEvents(events).text).toBe(missAnswer.content[0].text);
  });

  it('a passed-through stream is kept whole and replayed on a hit', async () => {
    const cache = { 'x-api-key': gw.key, 'x-gateway-cache': 'true' };
    nextAnswer((u) =>
      u.reply(200, fixtureWireBody('anthropic-stream-text-then-tool-use.sse'), {
        'content-type': 'text/event-stream',
      }),
    );
    const body = hello(CLAUDE, { stream: true, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    const miss = await post(body, cache);
    expect(miss.text).toBe(`${fixtureWireBody('anthropic-stream-text-then-tool-use.sse')}\n\n`);
    const calls = received().length;
    const hit = await post(body, cache);
    expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
    expect(received()).toHaveLength(calls);
    expect(accumulateEvents(parseEvents(hit.text))).toEqual(accumulateEvents(parseEvents(miss.text)));
    nextAnswer((u) => u.reply(200, ANSWER));
  });

  it('Idempotency-Key replays the first answer', async () => {
    const headers = { 'x-api-key': gw.key, 'idempotency-key': 'messages-once' };
    const first = await post(hello(), headers);
    const again = await post(hello(), headers);
    expect(again.headers.get('x-gateway-idempotent-replay')).toBe('true');
    expect(again.json).toEqual(first.json);
  });

  it('a preset’s system goes first in the top-level system of a passed-through body', async () => {
    const created = await gw.gateway.fetch(
      new Request('http://gateway.test/v1/presets', {
        method: 'POST',
        headers: { authorization: `Bearer ${gw.provisioningKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'terse', config: { model: CLAUDE, system: 'Answer in one word.' } }),
      }),
    );
    expect(created.status).toBe(201);
    const answered = await post({ ...hello('@preset/terse'), system: [{ type: 'text', text: 'Be kind.' }] });
    expect(answered.status, answered.text).toBe(200);
    const sent = received().at(-1)!.body;
    expect(sent.model).toBe(CLAUDE_UPSTREAM);
    expect(sent.system).toEqual([
      { type: 'text', text: 'Answer in one word.' },
      { type: 'text', text: 'Be kind.' },
    ]);
    expect(sent).not.toHaveProperty('preset');
  });

  it('an output guardrail blocks a Messages answer: 422 invalid_request_error, charged for the tokens', async () => {
    const guarded = await createTenant(gw.storage);
    const rule = await gw.gateway.fetch(
      new Request('http://gateway.test/v1/guardrails', {
        method: 'POST',
        headers: { authorization: `Bearer ${guarded.provisioningKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'no hello', stage: 'output', category: 'keyword', pattern: 'hello' }),
      }),
    );
    expect(rule.status).toBe(201);
    const blocked = await post(hello(CLAUDE), { 'x-api-key': guarded.inferenceKey });
    expectAnthropicError(blocked, 422, 'guardrail_blocked', 'invalid_request_error');
  });
});

describe('Messages API - streams that break, count_tokens, the OpenAPI document', () => {
  it('a translated stream that breaks after its first byte ends with one event: error in Anthropic’s body', async () => {
    const chunk = (content: string) =>
      `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    // One read with two chunks, then the connection breaks.
    nextAnswer((u) => u.stream([chunk('Hello') + chunk(' there'), new TypeError('terminated')]));
    const broken = await post(hello(GPT, { stream: true }));
    nextAnswer((u) => u.reply(200, ANSWER));
    const events = parseEvents(broken.text);
    expect(events.map((e) => e.data.type)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'error',
    ]);
    expect(events.at(-1)).toEqual({
      event: 'error',
      data: {
        type: 'error',
        error: { type: 'api_error', message: expect.stringMatching(/^upstream_error: /) },
        request_id: broken.headers.get('x-gateway-request-id'),
      },
    });
    const record = await gw.storage.getRequestRecord(
      gw.accountId,
      broken.headers.get('x-gateway-request-id')!,
    );
    expect(record).toMatchObject({
      endpoint: 'messages',
      status: 'broken_stream',
      errorCode: 'upstream_error',
    });
    expect(record?.costMicros).toBeGreaterThan(0);
  });

  it('count_tokens: Anthropic’s 5xx falls back to the estimate; its 4xx is the caller’s 400', async () => {
    const count = { model: CLAUDE, messages: [{ role: 'user', content: 'Count me.' }] };
    nextAnswer((u) => u.reply(500, { type: 'error', error: { type: 'api_error', message: 'down' } }));
    const estimated = await post(count, null, '/v1/messages/count_tokens');
    expect(estimated.status).toBe(200);
    expect(estimated.json.input_tokens).toBeGreaterThan(0);
    nextAnswer((u) =>
      u.reply(400, { type: 'error', error: { type: 'invalid_request_error', message: 'bad block' } }),
    );
    const refused = await post(count, null, '/v1/messages/count_tokens');
    expectAnthropicError(refused, 400, 'invalid_request', 'invalid_request_error');
    expect(refused.json.error.message).toContain('bad block');
    nextAnswer((u) => u.reply(200, ANSWER));
    expectAnthropicError(
      await post({ model: 'acme/nobody', messages: count.messages }, null, '/v1/messages/count_tokens'),
      404,
      'model_not_found',
      'not_found_error',
    );
  });

  it('/api/openapi.json lists both paths, the x-api-key scheme and Anthropic’s error body, and is valid', async () => {
    const document = (await (
      await gw.gateway.fetch(new Request('http://gateway.test/api/openapi.json'))
    ).json()) as Json;
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      expect(document.paths[path].post.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
      expect(document.paths[path].post.responses.default.content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/AnthropicError',
      });
    }
    await SwaggerParser.validate(structuredClone(document));
  });
});
