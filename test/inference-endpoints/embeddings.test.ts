import { expect, it } from 'vitest';
import {
  describeOnEachInferenceStorage,
  EMBEDDINGS_BASE64_FIXTURE,
  embeddingsAnswer,
  expectCharged,
  expectRefused,
  expectUpstreamFailure,
  type Json,
  openAIError,
  requestIdOf,
} from '../helpers/inference-wire.js';

/** An input whose pre-flight estimate (13,650 tokens) covers the 12,345 tokens the upstream bills. */
const LONG_INPUT = 'The food was delicious and the waiter… '.repeat(1_300);

/**
 * `POST /v1/embeddings` in-process (product.md "POST /v1/embeddings"): OpenAI's request and
 * answer, the catalogue id as `model`, the charge `usage.prompt_tokens` × the route's `prompt`
 * price (rounded up once), the pre-flight ⌈ASCII characters / 4⌉ + one per non-ASCII character (or
 * the token count of token arrays) at the highest `prompt` price among the candidate routes.
 */
describeOnEachInferenceStorage('POST /v1/embeddings', (gw) => {
  const embed = (body: unknown, key: string, headers?: Record<string, string>) =>
    gw().post('/v1/embeddings', body, key, headers);

  it('answers OpenAI’s list with the catalogue id, charges prompt_tokens × price once, and records it', async () => {
    const tenant = await gw().newTenant();
    // 12,345 tokens × $0.02 per million = 246.9 micros → 247 (rounded up once). The input is long
    // enough for the hold to cover them (a charge never exceeds its hold).
    gw().upstream.on('p1', embeddingsAnswer({ inputs: 2, promptTokens: 12_345 }));
    const response = await embed(
      {
        model: 'acme/embed',
        input: [LONG_INPUT, 'Ünïcode too'],
        dimensions: 3,
        user: 'user-1234',
        metadata: { team: 'search' },
        provider: { allow_fallbacks: true },
        models: ['acme/embed-solo'],
      },
      tenant.inferenceKey,
      { 'X-Title': 'Embedder' },
    );
    const { body, record } = await expectCharged(gw(), tenant, response, {
      costMicros: 247,
      costUsd: '0.000247',
      model: 'acme/embed',
      provider: 'p1',
    });
    expect(body).toMatchObject({
      object: 'list',
      model: 'acme/embed',
      usage: { prompt_tokens: 12_345, total_tokens: 12_345 },
    });
    expect(body.data).toEqual([
      { object: 'embedding', embedding: [0.0023064255, -0.009327292, -0.0028842222], index: 0 },
      { object: 'embedding', embedding: [0.0023064255, -0.009327292, -0.0028842222], index: 1 },
    ]);
    expect(body.gateway.requested_model).toBeUndefined();

    // Upstream: the route's URL, key and model name; caller fields kept; the gateway's stripped.
    const [call, ...more] = gw().upstream.calls;
    expect(more).toEqual([]);
    expect(call!.url).toBe('http://upstream.test/p1/v1/embeddings');
    expect(call!.headers.authorization).toBe('Bearer sk-p1');
    expect(call!.body).toEqual({
      model: 'text-embedding-3-small',
      input: [LONG_INPUT, 'Ünïcode too'],
      dimensions: 3,
      user: 'user-1234',
    });

    expect(record).toMatchObject({
      endpoint: 'embeddings',
      requested_model: null,
      stream: false,
      usage: { prompt_tokens: 12_345, completion_tokens: 0, cached_tokens: 0 },
      routing: { failures: [] },
      metadata: { team: 'search', title: 'Embedder' },
    });

    const usage = await gw().get('/v1/usage?days=1', tenant.inferenceKey);
    const { data } = (await usage.json()) as Json;
    expect(data.totals).toMatchObject({ requests: 1, errors: 0, prompt_tokens: 12_345, cost_micros: 247 });
    expect(data.by_model).toMatchObject([{ model: 'acme/embed', requests: 1, cost_micros: 247 }]);
    expect(data.by_provider).toMatchObject([{ provider: 'p1', requests: 1, cost_micros: 247 }]);
  });

  it('encoding_format "base64" goes upstream and the vectors come back exactly as the upstream sent them', async () => {
    const tenant = await gw().newTenant();
    const response = await embed(
      { model: 'acme/embed', input: 'The food was delicious', encoding_format: 'base64' },
      tenant.inferenceKey,
    );
    // The fixture reports 8 tokens: 8 × 0.02 = 0.16 micros → 1.
    const { body } = await expectCharged(gw(), tenant, response, {
      costMicros: 1,
      costUsd: '0.000001',
      model: 'acme/embed',
      provider: 'p1',
    });
    expect(gw().upstream.calls[0]!.body).toEqual({
      model: 'text-embedding-3-small',
      input: 'The food was delicious',
      encoding_format: 'base64',
    });
    expect(body.data).toEqual(EMBEDDINGS_BASE64_FIXTURE.data);
    expect(body.data[0].embedding).toBe('ZicXO4DRGLw4BT27');
    expect(body.usage).toEqual(EMBEDDINGS_BASE64_FIXTURE.usage);
  });

  it('an upstream answer without usage is charged the pre-flight estimate', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', embeddingsAnswer({ promptTokens: null }));
    // 4,000 ASCII characters → 1,000 tokens × $0.02 per million = 20 micros.
    const response = await embed({ model: 'acme/embed', input: 'a'.repeat(4_000) }, tenant.inferenceKey);
    const { body, record } = await expectCharged(gw(), tenant, response, {
      costMicros: 20,
      costUsd: '0.000020',
      model: 'acme/embed',
      provider: 'p1',
    });
    expect(body.usage).toEqual({ prompt_tokens: 1_000, total_tokens: 1_000 });
    expect(record.usage.prompt_tokens).toBe(1_000);
  });

  it('fails over: p1 answers 503, p2 serves at its own price; the record keeps the trail', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', openAIError(503));
    gw().upstream.on('p2', embeddingsAnswer({ promptTokens: 1_000 }));
    // 1,000 tokens × $0.05 per million = 50 micros; 4,000 characters hold 1,000 tokens.
    const response = await embed(
      { model: 'acme/embed', input: 'fail over '.repeat(400) },
      tenant.inferenceKey,
    );
    const { record } = await expectCharged(gw(), tenant, response, {
      costMicros: 50,
      costUsd: '0.000050',
      model: 'acme/embed',
      provider: 'p2',
      attempts: 2,
    });
    expect(gw().upstream.calls.map((c) => [c.provider, c.body.model])).toEqual([
      ['p1', 'text-embedding-3-small'],
      ['p2', 'embed-mirror'],
    ]);
    expect(record.routing.failures).toEqual([{ provider: 'p1', status: 503, reason: 'http_503' }]);
  });

  it('every route fails → 502 upstream_error, nothing charged, an error record with the trail', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', openAIError(503));
    gw().upstream.on('p2', openAIError(500, 'internal'));
    const response = await embed({ model: 'acme/embed', input: 'nobody home' }, tenant.inferenceKey);
    await expectUpstreamFailure(gw(), tenant, response, {
      endpoint: 'embeddings',
      failures: [
        { provider: 'p1', status: 503, reason: 'http_503' },
        { provider: 'p2', status: 500, reason: 'http_500' },
      ],
    });
  });

  it('an upstream 400 is returned at once as 400 invalid_request naming the provider (no failover, no charge)', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', openAIError(400, "This model's maximum context length is 8192 tokens."));
    const response = await embed({ model: 'acme/embed', input: 'too long' }, tenant.inferenceKey);
    const body = (await response.json()) as Json;
    expect(response.status).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('p1');
    expect(body.error.message).toContain('8192');
    expect(gw().upstream.calls.map((c) => c.provider)).toEqual(['p1']);
    expect(await gw().charges(tenant.account.id)).toEqual([]);
    expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
    const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
    expect(record).toMatchObject({ endpoint: 'embeddings', http_status: 400, cost_micros: 0 });
  });

  it('pre-flight: a balance one micro below the worst case → 402 insufficient_credit, nothing sent upstream', async () => {
    const cases: { input: unknown; worstCase: number }[] = [
      // 400,000 ASCII characters → 100,000 tokens at the highest prompt price (p2, 0.05) = 5,000.
      { input: 'a'.repeat(400_000), worstCase: 5_000 },
      // 1,000 non-ASCII characters (one token each) + ⌈4 / 4⌉ → 1,001 tokens × 0.05 = 50.05 → 51.
      { input: ['é'.repeat(500), `${'漢'.repeat(500)}abcd`], worstCase: 51 },
      // A token array counts its length: 2 × 5,000 tokens × 0.05 = 500.
      { input: [Array(5_000).fill(1), Array(5_000).fill(2)], worstCase: 500 },
    ];
    for (const { input, worstCase } of cases) {
      gw().upstream.reset();
      const poor = await gw().newTenant(worstCase - 1);
      const refused = await embed({ model: 'acme/embed', input }, poor.inferenceKey);
      const { error } = await expectRefused(gw(), poor, refused, {
        status: 402,
        code: 'insufficient_credit',
        endpoint: 'embeddings',
      });
      expect(error.type).toBe('billing_error');

      const enough = await gw().newTenant(worstCase);
      const served = await embed({ model: 'acme/embed', input }, enough.inferenceKey);
      expect(served.status).toBe(200);
      expect(gw().upstream.calls).toHaveLength(1);
    }
  });

  it('refusals are recorded and never charged: a bad input, a chat model, an unknown model', async () => {
    const tenant = await gw().newTenant();
    const cases = [
      { body: { model: 'acme/embed', input: {} }, status: 400, code: 'invalid_request', says: /input/ },
      { body: { model: 'acme/embed', input: [] }, status: 400, code: 'invalid_request', says: /input/ },
      {
        body: { model: 'acme/chat', input: 'hi' },
        status: 400,
        code: 'invalid_request',
        says: /"acme\/chat" is a chat model/,
      },
      { body: { model: 'acme/nope', input: 'hi' }, status: 404, code: 'model_not_found', says: /acme\/nope/ },
    ];
    for (const { body, status, code, says } of cases) {
      const response = await embed(body, tenant.inferenceKey);
      const { error, record } = await expectRefused(gw(), tenant, response, {
        status,
        code,
        endpoint: 'embeddings',
      });
      expect(error.message).toMatch(says);
      expect(record.requested_model ?? record.model).toBe(body.model);
    }
  });

  it('input holds at most 2,048 items: 2,049 texts, 2,049 token arrays and 200,000 texts → 400, never a 500', async () => {
    const tenant = await gw().newTenant();
    const inputs = [
      Array.from({ length: 2_049 }, (_, i) => `text ${i}`),
      Array.from({ length: 2_049 }, () => [1, 2, 3]),
      Array.from({ length: 200_000 }, () => 'x'),
    ];
    for (const input of inputs) {
      const response = await embed({ model: 'acme/embed', input }, tenant.inferenceKey);
      const { error } = await expectRefused(gw(), tenant, response, {
        status: 400,
        code: 'invalid_request',
        endpoint: 'embeddings',
      });
      expect(error.message).toContain('body.input: must hold at most 2048 inputs');
    }
  });

  it('2,048 texts, and one token array longer than that, are embedded and charged once', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', embeddingsAnswer({ inputs: 2_048, promptTokens: 4_096 }));
    const many = await embed(
      { model: 'acme/embed', input: Array.from({ length: 2_048 }, (_, i) => `text ${i}`) },
      tenant.inferenceKey,
    );
    expect(many.status, await many.clone().text()).toBe(200);
    gw().upstream.on('p1', embeddingsAnswer({ inputs: 1, promptTokens: 5_000 }));
    const long = await embed(
      { model: 'acme/embed', input: Array.from({ length: 5_000 }, (_, i) => i) },
      tenant.inferenceKey,
    );
    expect(long.status, await long.clone().text()).toBe(200);
    expect(await gw().charges(tenant.account.id)).toHaveLength(2);
  });
});
