import { createApiKey } from '@tollgate/core';
import { APIError } from 'openai';
import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectError, REQUEST_ID } from './helpers/http.js';
import {
  describeRecords,
  expectedCostMicros,
  getJson,
  PATHS,
  type RecordsGateway,
} from './helpers/records-gateway.js';
import { openAiCompletion, recordedOpenAiCompletion } from './helpers/records-wire.js';
import type { Tenant } from './helpers/test-gateway.js';
import { fixtureWireBody, readFixture, sseEventsOf } from './helpers/wire-fixtures.js';

/** Every field name `GET /generation` answers with (the spec's request record, in the gateway's names). */
const RECORD_FIELDS = [
  'attachments',
  'attempts',
  'byok',
  'cache_hit',
  'cached_tokens' /* inside usage */,
  'completion_tokens' /* inside usage */,
  'cost_micros',
  'cost_usd',
  'created_at',
  'duration_ms',
  'endpoint',
  'error',
  'finish_reason',
  'guardrails',
  'http_status',
  'id',
  'key_id',
  'metadata',
  'model',
  'overrun_micros',
  'preset',
  'project_id',
  'prompt_tokens' /* inside usage */,
  'provider',
  'requested_model',
  'routing',
  'saved_micros',
  'saved_usd',
  'status',
  'stream',
  'ttft_ms',
  'usage',
  'waived',
];

const ONE_PIXEL_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** The request id of a failed SDK call (from `X-Gateway-Request-Id`), with the error. */
async function sdkFailure(promise: Promise<unknown>): Promise<{ error: APIError; requestId: string }> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    const requestId = error.headers?.get('x-gateway-request-id') ?? '';
    expect(requestId).toMatch(REQUEST_ID);
    return { error, requestId };
  }
  throw new Error('the request was expected to fail');
}

describeRecords('GET /v1/generation: the request record', (gw) => {
  let a: Tenant;
  let b: Tenant;
  const generation = (key: string, id: string) =>
    getJson(`${gw().url}/v1/generation?id=${encodeURIComponent(id)}`, key);
  const ledgerOf = async (tenant: Tenant, requestId: string) =>
    (await gw().storage.listLedgerEntries(tenant.account.id)).filter((e) => e.requestId === requestId);
  const balanceOf = async (tenant: Tenant) =>
    (await gw().storage.getAccount(tenant.account.id))!.balanceMicros;

  beforeAll(async () => {
    a = await gw().newTenant({ name: 'records a' });
    b = await gw().newTenant({ name: 'records b' });
  });
  beforeEach(() => gw().mock.reset());

  it('a served request has every field of the record, readable with any key scope of the account', async () => {
    const gateway: RecordsGateway = gw();
    gateway.mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
    const params = {
      model: 'acme/chat',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: ONE_PIXEL_PNG } },
          ],
        },
      ],
      metadata: {
        customer: 'cust-42',
        seats: 3,
        ratio: 0.25,
        beta: true,
        'trace.id:x-1': 'a_b',
        note: '  Grüße ✓ ',
      },
    } as unknown as ChatCompletionCreateParamsNonStreaming;
    const { data: completion, response } = await gateway
      .client(a.inferenceKey)
      .chat.completions.create(params, {
        headers: { 'HTTP-Referer': 'https://app.example.test/page', 'X-Title': 'Records E2E' },
      })
      .withResponse();
    const requestId = response.headers.get('x-gateway-request-id')!;
    expect(requestId).toMatch(REQUEST_ID);
    // 138 uncached × 0.15 + 9984 cached × 0.075 + 1 × 0.60 per million = 770.1 micros → 771.
    const cost = expectedCostMicros('acme/chat', { prompt: 10122, completion: 1, cached: 9984 });
    expect(cost).toBe(771);
    expect((completion as unknown as { gateway: { cost_micros: number } }).gateway.cost_micros).toBe(cost);

    const viaProvisioning = await generation(a.provisioningKey, requestId);
    expect(viaProvisioning.status).toBe(200);
    const record = viaProvisioning.body.data;
    const names = [...Object.keys(record), ...Object.keys(record.usage)].sort();
    expect(names).toEqual(RECORD_FIELDS);
    expect(record).toEqual({
      id: requestId,
      endpoint: 'chat.completions',
      model: 'acme/chat',
      requested_model: null,
      provider: 'oa',
      key_id: a.inferenceKeyId,
      project_id: null,
      status: 'success',
      http_status: 200,
      error: null,
      stream: false,
      usage: { prompt_tokens: 10122, completion_tokens: 1, cached_tokens: 9984 },
      cost_micros: 771,
      cost_usd: 0.000771,
      overrun_micros: 0,
      saved_micros: 0,
      saved_usd: 0,
      waived: null,
      byok: false,
      cache_hit: false,
      preset: null,
      ttft_ms: null,
      duration_ms: expect.any(Number),
      finish_reason: 'stop',
      attempts: 1,
      routing: { failures: [] },
      attachments: { image_url: 1 },
      guardrails: [],
      metadata: {
        customer: 'cust-42',
        seats: '3',
        ratio: '0.25',
        beta: 'true',
        'trace.id:x-1': 'a_b',
        note: '  Grüße ✓ ',
        referer: 'https://app.example.test/page',
        title: 'Records E2E',
      },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Number.isInteger(record.duration_ms) && record.duration_ms >= 0).toBe(true);
    expect(Math.abs(Date.parse(record.created_at) - Date.now())).toBeLessThan(10 * 60_000);

    const viaInference = await generation(a.inferenceKey, requestId);
    expect(viaInference.status).toBe(200);
    expect(viaInference.body.data).toEqual(record);

    const ledger = await ledgerOf(a, requestId);
    expect(ledger.map((e) => e.amountMicros)).toEqual([-771]);
    // The ledger line names the model and its token counts (and never content).
    expect(ledger[0]!.kind).toBe('charge');
    expect(ledger[0]!.description).toContain('acme/chat');
    expect(ledger[0]!.description).toContain('10122');
  });

  it("a key's project is on the record", async () => {
    const project = await gw().storage.createProject({ accountId: a.account.id, name: 'records project' });
    const inProject = await createApiKey(gw().storage, {
      accountId: a.account.id,
      name: 'project key',
      scope: 'inference',
      env: 'test',
      projectId: project.id,
    });
    gw().mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
    const { response } = await gw()
      .client(inProject.secret)
      .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const record = (await generation(a.provisioningKey, response.headers.get('x-gateway-request-id')!)).body
      .data;
    expect(record).toMatchObject({ key_id: inProject.key.id, project_id: project.id, status: 'success' });
  });

  it('metadata at the limits is kept verbatim: 16 keys, a 64-character key, a 256-character value, plus the header tags', async () => {
    const metadata: Record<string, string> = Object.fromEntries(
      Array.from({ length: 14 }, (_, i) => [`k${i}`, `v${i}`]),
    );
    metadata['K'.repeat(64)] = 'long key';
    metadata.long = 'é'.repeat(256);
    gw().mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
    const { response } = await gw()
      .client(a.inferenceKey)
      .chat.completions.create(
        { model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }], metadata },
        { headers: { 'HTTP-Referer': 'https://r.example', 'X-Title': 'T' } },
      )
      .withResponse();
    expect(response.status).toBe(200);
    const record = (await generation(a.inferenceKey, response.headers.get('x-gateway-request-id')!)).body
      .data;
    expect(record.metadata).toEqual({ ...metadata, referer: 'https://r.example', title: 'T' });
    expect(Object.keys(record.metadata)).toHaveLength(18);
  });

  it('an explicit metadata.referer / metadata.title wins over the headers', async () => {
    gw().mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
    const { response } = await gw()
      .client(a.inferenceKey)
      .chat.completions.create(
        {
          model: 'acme/chat',
          messages: [{ role: 'user', content: 'hi' }],
          metadata: { referer: 'from-body', title: 'body title' },
        },
        { headers: { 'HTTP-Referer': 'https://header.example', 'X-Title': 'header title' } },
      )
      .withResponse();
    const record = (await generation(a.inferenceKey, response.headers.get('x-gateway-request-id')!)).body
      .data;
    expect(record.metadata).toEqual({ referer: 'from-body', title: 'body title' });
  });

  it('a stream served by a `models` fallback records the requested model, TTFT, attempts and the failover trail', async () => {
    const gateway = gw();
    // acme/flaky's only route answers 503 on each of its 3 attempts; claude/sonnet then streams.
    gateway.mock.enqueue(
      PATHS.flaky,
      ...[1, 2, 3].map(() => ({
        kind: 'json' as const,
        status: 503,
        body: { error: { message: 'overloaded' } },
      })),
    );
    gateway.mock.enqueue(PATHS.an, {
      kind: 'sse',
      events: sseEventsOf(fixtureWireBody('anthropic-stream-text-then-tool-use.sse')),
    });
    const params = {
      model: 'acme/flaky',
      models: ['claude/sonnet'],
      stream: true,
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather',
            parameters: { type: 'object', properties: { location: { type: 'string' } } },
          },
        },
      ],
    } as unknown as ChatCompletionCreateParamsStreaming;
    const { data: stream, response } = await gateway
      .client(a.inferenceKey)
      .chat.completions.create(params)
      .withResponse();
    const requestId = response.headers.get('x-gateway-request-id')!;
    // biome-ignore lint/suspicious/noExplicitAny: the terminal chunk carries the additive `gateway` object.
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const terminal = chunks.at(-1);
    // message_start says 377 input tokens, message_delta 65 output tokens: 377 × 3 + 65 × 15 = 2106 micros.
    const cost = expectedCostMicros('claude/sonnet', { prompt: 377, completion: 65 });
    expect(cost).toBe(2106);
    expect(terminal.gateway).toMatchObject({ request_id: requestId, cost_micros: cost, attempts: 4 });

    const record = (await generation(a.provisioningKey, requestId)).body.data;
    expect(record).toMatchObject({
      id: requestId,
      model: 'claude/sonnet',
      requested_model: 'acme/flaky',
      provider: 'an',
      status: 'success',
      http_status: 200,
      error: null,
      stream: true,
      usage: { prompt_tokens: 377, completion_tokens: 65, cached_tokens: 0 },
      cost_micros: 2106,
      cost_usd: 0.002106,
      saved_micros: 0,
      byok: false,
      cache_hit: false,
      finish_reason: 'tool_calls',
      attempts: 4,
      routing: {
        failures: [
          { provider: 'flaky', status: 503, reason: 'http_503' },
          { provider: 'flaky', status: 503, reason: 'http_503 (try 2)' },
          { provider: 'flaky', status: 503, reason: 'http_503 (try 3)' },
        ],
      },
      attachments: {},
      guardrails: [],
      metadata: {},
    });
    expect(Number.isInteger(record.ttft_ms) && record.ttft_ms >= 0).toBe(true);
    expect(record.duration_ms).toBeGreaterThanOrEqual(record.ttft_ms);
    expect((await ledgerOf(a, requestId)).map((e) => e.amountMicros)).toEqual([-2106]);
  });

  /**
   * Streams `claude/sonnet` for tenant `a` ("Paris?"), answered by the recorded Anthropic text-then-tool
   * stream with the given hold / break points; the SDK stream and the request id.
   */
  async function streamRecordedAnthropic(cut: { holdAfter: number; breakAfter?: number }) {
    const events = sseEventsOf(fixtureWireBody('anthropic-stream-text-then-tool-use.sse'));
    gw().mock.enqueue(PATHS.an, { kind: 'sse', events, ...cut });
    const { data: stream, response } = await gw()
      .client(a.inferenceKey)
      .chat.completions.create({
        model: 'claude/sonnet',
        stream: true,
        messages: [{ role: 'user', content: 'Paris?' }],
      })
      .withResponse();
    const requestId = response.headers.get('x-gateway-request-id')!;
    return { stream, requestId };
  }

  it('a stream that breaks mid-answer is recorded as broken, charged for what was produced, with a ledger entry', async () => {
    // message_start (377 input tokens), the text block start, a ping and two text deltas; the stream is
    // held there until the client has read the text (so those bytes surely left), then the connection drops.
    const { stream, requestId } = await streamRecordedAnthropic({ holdAfter: 5, breakAfter: 6 });
    let text = '';
    // The SDK turns the gateway's `event: error` into a thrown APIError.
    const thrown = await (async () => {
      try {
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta?.content ?? '';
          if (text.endsWith('for you.')) gw().mock.release();
        }
      } catch (error) {
        return error;
      }
      return null;
    })();
    expect(thrown).toBeInstanceOf(APIError);
    expect(text).toBe("I'll check the current weather in Paris for you.");
    const record = (await generation(a.inferenceKey, requestId)).body.data;
    // 48 characters delivered ≈ 12 completion tokens; the prompt as message_start reported it.
    const cost = expectedCostMicros('claude/sonnet', { prompt: 377, completion: 12 });
    expect(record).toMatchObject({
      id: requestId,
      status: 'broken_stream',
      error: { code: 'upstream_error', message: expect.any(String) },
      stream: true,
      finish_reason: null,
      usage: { prompt_tokens: 377, completion_tokens: 12, cached_tokens: 0 },
      cost_micros: cost,
      attempts: 1,
    });
    expect(Number.isInteger(record.ttft_ms)).toBe(true);
    expect((await ledgerOf(a, requestId)).map((e) => e.amountMicros)).toEqual([-cost]);
  });

  it('a stream the client abandons is recorded as client_closed and charged for what was produced', async () => {
    // Held after the two text deltas: the client reads them and hangs up while the provider is still going.
    const { stream, requestId } = await streamRecordedAnthropic({ holdAfter: 5 });
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (text.endsWith('for you.')) break; // leaving the loop aborts the SDK's request
    }
    const cost = expectedCostMicros('claude/sonnet', { prompt: 377, completion: 12 });
    await vi.waitFor(
      async () => {
        const looked = await generation(a.inferenceKey, requestId);
        expect(looked.status).toBe(200);
        expect(looked.body.data).toMatchObject({
          status: 'client_closed',
          http_status: 499,
          error: { code: 'client_closed', message: expect.any(String) },
          finish_reason: null,
          usage: { prompt_tokens: 377, completion_tokens: 12 },
          cost_micros: cost,
        });
      },
      { timeout: 10_000, interval: 50 },
    );
    expect((await ledgerOf(a, requestId)).map((e) => e.amountMicros)).toEqual([-cost]);
    expect(await gw().storage.listReservations(a.account.id, gw().clock.now())).toEqual([]);
  });

  it('a waived request records its saving in micros and is not charged', async () => {
    // No text and no tool calls: a zero completion. 1000 prompt tokens × 0.15 = 150 micros saved.
    gw().mock.enqueue(PATHS.oa, {
      kind: 'json',
      body: openAiCompletion({ text: '', usage: { prompt: 1000, completion: 0 } }),
    });
    const before = await balanceOf(a);
    const { response } = await gw()
      .client(a.inferenceKey)
      .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'say nothing' }] })
      .withResponse();
    const requestId = response.headers.get('x-gateway-request-id')!;
    const record = (await generation(a.inferenceKey, requestId)).body.data;
    expect(record).toMatchObject({
      status: 'success',
      cost_micros: 0,
      cost_usd: 0,
      saved_micros: 150,
      saved_usd: 0.00015,
      waived: 'zero_completion',
    });
    expect(await ledgerOf(a, requestId)).toEqual([]);
    expect(await balanceOf(a)).toBe(before);
  });

  it('an upstream 4xx is recorded with its error code, message and trail, and nothing is charged', async () => {
    gw().mock.enqueue(PATHS.oa, {
      kind: 'raw',
      status: 400,
      body: readFixture('openai-error-400-unsupported-parameter.json'),
    });
    const before = await balanceOf(a);
    const { error, requestId } = await sdkFailure(
      gw()
        .client(a.inferenceKey)
        .chat.completions.create({
          model: 'acme/chat',
          max_tokens: 5,
          messages: [{ role: 'user', content: 'x' }],
        }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe('invalid_request');
    const record = (await generation(a.inferenceKey, requestId)).body.data;
    expect(record).toMatchObject({
      id: requestId,
      model: 'acme/chat',
      requested_model: null,
      status: 'error',
      http_status: 400,
      error: { code: 'invalid_request', message: expect.stringContaining('400') },
      cost_micros: 0,
      attempts: 1,
      routing: { failures: [{ provider: 'oa', status: 400, reason: 'http_400' }] },
      ttft_ms: null,
      finish_reason: null,
    });
    expect(record.error.message).toContain('oa');
    expect(await ledgerOf(a, requestId)).toEqual([]);
    expect(await balanceOf(a)).toBe(before);
    expect(await gw().storage.listReservations(a.account.id, gw().clock.now())).toEqual([]);
  });

  it('every route failing is recorded as 502 upstream_error with all attempts, and nothing is charged', async () => {
    gw().mock.enqueue(
      PATHS.flaky,
      { kind: 'json', status: 500, body: { error: { message: 'boom' } } },
      { kind: 'reset' },
      { kind: 'json', status: 502, body: { error: { message: 'bad gateway' } } },
    );
    const before = await balanceOf(a);
    const { error, requestId } = await sdkFailure(
      gw()
        .client(a.inferenceKey)
        .chat.completions.create({ model: 'acme/flaky', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(error.status).toBe(502);
    expect(error.code).toBe('upstream_error');
    const record = (await generation(a.inferenceKey, requestId)).body.data;
    expect(record).toMatchObject({
      status: 'error',
      http_status: 502,
      error: { code: 'upstream_error', message: expect.any(String) },
      cost_micros: 0,
      attempts: 3,
      routing: {
        failures: [
          { provider: 'flaky', status: 500, reason: 'http_500' },
          { provider: 'flaky', status: null, reason: 'network_error (try 2)' },
          { provider: 'flaky', status: 502, reason: 'http_502 (try 3)' },
        ],
      },
    });
    expect(await ledgerOf(a, requestId)).toEqual([]);
    expect(await balanceOf(a)).toBe(before);
  });

  describe('refusals get a record with their error code and are never charged', () => {
    const expectRefusal = async (
      tenant: Tenant,
      requestId: string,
      httpStatus: number,
      code: string,
      model: string | null | undefined,
    ) => {
      const looked = await generation(tenant.inferenceKey, requestId);
      expect(looked.status, JSON.stringify(looked.body)).toBe(200);
      expect(looked.body.data).toMatchObject({
        id: requestId,
        status: 'refused',
        http_status: httpStatus,
        error: { code, message: expect.any(String) },
        ...(model !== undefined && { model }),
        provider: null,
        cost_micros: 0,
        saved_micros: 0,
        attempts: 0,
        routing: { failures: [] },
      });
      expect(await ledgerOf(tenant, requestId)).toEqual([]);
    };

    it('402 insufficient_credit', async () => {
      const poor = await gw().newTenant({ name: 'poor', creditMicros: 0 });
      const { error, requestId } = await sdkFailure(
        gw()
          .client(poor.inferenceKey)
          .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect([error.status, error.code]).toEqual([402, 'insufficient_credit']);
      await expectRefusal(poor, requestId, 402, 'insufficient_credit', 'acme/chat');
      expect(await balanceOf(poor)).toBe(0);
      expect(await gw().storage.listLedgerEntries(poor.account.id)).toEqual([]);
      expect(gw().mock.received).toEqual([]);
    });

    it('402 key_limit_exceeded, on a key with a tiny spend limit', async () => {
      const capped = await createApiKey(gw().storage, {
        accountId: a.account.id,
        name: 'capped',
        scope: 'inference',
        env: 'live',
        spendLimitMicros: 1,
      });
      const { error, requestId } = await sdkFailure(
        gw()
          .client(capped.secret)
          .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect([error.status, error.code]).toEqual([402, 'key_limit_exceeded']);
      await expectRefusal(a, requestId, 402, 'key_limit_exceeded', 'acme/chat');
      const record = (await generation(a.inferenceKey, requestId)).body.data;
      expect(record.key_id).toBe(capped.key.id);
    });

    it('429 rate_limited, on a key limited to 1 request per minute', async () => {
      const limited = await createApiKey(gw().storage, {
        accountId: a.account.id,
        name: 'limited',
        scope: 'inference',
        env: 'live',
        rateLimitRpm: 1,
      });
      const client = gw().client(limited.secret);
      const first = await sdkFailure(
        client.chat.completions.create({ model: 'nope/first', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect(first.error.status).toBe(404);
      const { error, requestId } = await sdkFailure(
        client.chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect([error.status, error.code]).toEqual([429, 'rate_limited']);
      await expectRefusal(a, requestId, 429, 'rate_limited', undefined);
      expect(gw().mock.received).toEqual([]);
    });

    it('404 model_not_found', async () => {
      const before = await balanceOf(a);
      const { error, requestId } = await sdkFailure(
        gw()
          .client(a.inferenceKey)
          .chat.completions.create({ model: 'nope/missing', messages: [{ role: 'user', content: 'x' }] }),
      );
      expect([error.status, error.code]).toEqual([404, 'model_not_found']);
      await expectRefusal(a, requestId, 404, 'model_not_found', 'nope/missing');
      expect(await balanceOf(a)).toBe(before);
    });

    it('400 for a body that fails validation (no messages)', async () => {
      const { error, requestId } = await sdkFailure(
        gw().client(a.inferenceKey).chat.completions.create({ model: 'acme/chat', messages: [] }),
      );
      expect([error.status, error.code]).toEqual([400, 'invalid_request']);
      await expectRefusal(a, requestId, 400, 'invalid_request', 'acme/chat');
    });

    it('400 for metadata with an object, array or null value, 17 keys, a bad or 65-character key, a 257-character value', async () => {
      const before = await balanceOf(a);
      const bad: unknown[] = [
        { nested: { a: 1 } },
        Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
        { 'has space': 'v' },
        { ['K'.repeat(65)]: 'v' },
        { long: 'x'.repeat(257) },
        { list: ['a'] },
        { nothing: null },
      ];
      for (const metadata of bad) {
        const { error, requestId } = await sdkFailure(
          gw()
            .client(a.inferenceKey)
            .chat.completions.create({
              model: 'acme/chat',
              messages: [{ role: 'user', content: 'x' }],
              metadata,
            } as unknown as ChatCompletionCreateParamsNonStreaming),
        );
        expect([error.status, error.code]).toEqual([400, 'invalid_request']);
        await expectRefusal(a, requestId, 400, 'invalid_request', 'acme/chat');
      }
      expect(gw().mock.received).toEqual([]);
      expect(await balanceOf(a)).toBe(before);
      expect(await gw().storage.listReservations(a.account.id, gw().clock.now())).toEqual([]);
    });
  });

  it("another account's request id reads 404 not_found, with either of its keys", async () => {
    gw().mock.enqueue(PATHS.oa, { kind: 'json', body: recordedOpenAiCompletion() });
    const { response } = await gw()
      .client(a.inferenceKey)
      .chat.completions.create({ model: 'acme/chat', messages: [{ role: 'user', content: 'x' }] })
      .withResponse();
    const requestId = response.headers.get('x-gateway-request-id')!;
    expect((await generation(a.inferenceKey, requestId)).status).toBe(200);
    for (const key of [b.inferenceKey, b.provisioningKey]) {
      const response = await fetch(`${gw().url}/v1/generation?id=${requestId}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await response.text();
      expectError(
        { status: response.status, headers: response.headers, body: JSON.parse(text), text },
        404,
        'not_found',
      );
    }
  });

  it('an unknown id is 404 not_found; a missing or empty id is 400 invalid_request', async () => {
    const read = async (query: string) => {
      const response = await fetch(`${gw().url}/v1/generation${query}`, {
        headers: { authorization: `Bearer ${a.inferenceKey}` },
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: JSON.parse(text), text };
    };
    expectError(await read('?id=req_doesnotexist0000'), 404, 'not_found');
    expectError(await read(''), 400, 'invalid_request');
    expectError(await read('?id='), 400, 'invalid_request');
  });
});
