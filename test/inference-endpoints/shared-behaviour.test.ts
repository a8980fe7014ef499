import { expect, it } from 'vitest';
import {
  describeOnEachInferenceStorage,
  embeddingsAnswer,
  expectCharged,
  expectRefused,
  type Json,
  MAX_REQUEST_MB,
  openAIError,
  PRICES,
  requestIdOf,
} from '../helpers/inference-wire.js';

/**
 * What every inference endpoint shares (product.md "Every inference endpoint is the same metered
 * call", "Catalogue rows for the new model types", "Request size caps"): the model type check both
 * ways, the body cap, `Idempotency-Key`, `models` fallback, `provider.order`, `:free`, `GET /models`.
 */
describeOnEachInferenceStorage('inference endpoints, shared behaviour', (gw) => {
  /** One cheap request per endpoint, and what it costs on its first route. */
  const ENDPOINTS = [
    {
      path: '/v1/embeddings',
      endpoint: 'embeddings',
      body: { model: 'acme/embed', input: 'idempotent' },
      costMicros: 1,
      costUsd: '0.000001',
      provider: 'p1',
    },
    {
      path: '/v1/images/generations',
      endpoint: 'images.generations',
      body: { model: 'acme/image', prompt: 'idempotent' },
      costMicros: PRICES.imageP1,
      costUsd: '0.040000',
      provider: 'p1',
    },
    {
      path: '/v1/rerank',
      endpoint: 'rerank',
      body: { model: 'acme/rerank', query: 'idempotent', documents: ['a', 'b', 'c', 'd', 'e'] },
      costMicros: PRICES.rerankCohere,
      costUsd: '0.002000',
      provider: 'co',
    },
  ];

  it('an embedding model on /v1/chat/completions → 400 invalid_request naming its type, recorded', async () => {
    const tenant = await gw().newTenant();
    const response = await gw().post(
      '/v1/chat/completions',
      { model: 'acme/embed', messages: [{ role: 'user', content: 'hi' }] },
      tenant.inferenceKey,
    );
    const { error } = await expectRefused(gw(), tenant, response, {
      status: 400,
      code: 'invalid_request',
      endpoint: 'chat.completions',
    });
    expect(error.message).toContain('"acme/embed" is an embedding model');
  });

  it('a `models` fallback of another type is refused too (400, naming the type), nothing sent', async () => {
    const tenant = await gw().newTenant();
    const response = await gw().post(
      '/v1/embeddings',
      { model: 'acme/embed', models: ['acme/image'], input: 'x' },
      tenant.inferenceKey,
    );
    const { error } = await expectRefused(gw(), tenant, response, {
      status: 400,
      code: 'invalid_request',
      endpoint: 'embeddings',
    });
    expect(error.message).toContain('"acme/image" is an image model');
  });

  it('a body over limits.max_request_mb → 413 with both figures in MB, a refusal record, nothing sent', async () => {
    for (const { path, endpoint, body } of ENDPOINTS) {
      const tenant = await gw().newTenant();
      const text = JSON.stringify({ ...body, padding: 'x'.repeat(1.5 * MAX_REQUEST_MB * 1024 * 1024) });
      const response = await gw().post(path, text, tenant.inferenceKey, {
        'content-length': String(Buffer.byteLength(text)),
      });
      const { error } = await expectRefused(gw(), tenant, response, {
        status: 413,
        code: 'payload_too_large',
        endpoint,
      });
      expect(error.message).toMatch(/^Request body is (over )?1\.5\d* MB; the limit is 1 MB\.$/);
    }
  });

  it('the same Idempotency-Key twice → one upstream call, one charge; the second is the replay', async () => {
    for (const { path, body, costMicros, costUsd, provider } of ENDPOINTS) {
      gw().upstream.reset();
      const tenant = await gw().newTenant();
      const headers = { 'Idempotency-Key': `same-${path}` };
      const first = await gw().post(path, body, tenant.inferenceKey, headers);
      const firstText = await first.clone().text();
      const { body: answer } = await expectCharged(gw(), tenant, first, {
        costMicros,
        costUsd,
        model: body.model,
        provider,
      });
      const second = await gw().post(path, body, tenant.inferenceKey, headers);
      expect(second.status).toBe(200);
      expect(second.headers.get('x-gateway-idempotent-replay')).toBe('true');
      expect(requestIdOf(second)).toBe(answer.gateway.request_id);
      expect(second.headers.get('x-gateway-cost-usd')).toBe(costUsd);
      expect(await second.text()).toBe(firstText);
      expect(gw().upstream.calls).toHaveLength(1);
      expect(await gw().charges(tenant.account.id)).toHaveLength(1);
      expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros - costMicros);
    }
  });

  it('`models` fallback: the requested model’s only route fails, the next model serves and is named', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p2', openAIError(503));
    gw().upstream.on('p1', embeddingsAnswer({ promptTokens: 1_000 }));
    const response = await gw().post(
      '/v1/embeddings',
      // 4,000 characters: the hold covers the 1,000 tokens billed.
      { model: 'acme/embed-solo', models: ['acme/embed'], input: 'fallback'.repeat(500) },
      tenant.inferenceKey,
    );
    const { body, record } = await expectCharged(gw(), tenant, response, {
      costMicros: 20,
      costUsd: '0.000020',
      model: 'acme/embed',
      provider: 'p1',
      attempts: 2,
    });
    expect(body.model).toBe('acme/embed');
    expect(body.gateway.requested_model).toBe('acme/embed-solo');
    expect(record.requested_model).toBe('acme/embed-solo');
    expect(gw().upstream.calls.map((c) => [c.provider, c.body.model])).toEqual([
      ['p2', 'embed-solo-1'],
      ['p1', 'text-embedding-3-small'],
    ]);
  });

  it('provider.order puts the named provider first on every endpoint', async () => {
    const tenant = await gw().newTenant();
    const cases = [
      {
        path: '/v1/embeddings',
        body: { model: 'acme/embed', input: 'x' },
        first: 'p2',
        upstreamModel: 'embed-mirror',
      },
      {
        path: '/v1/images/generations',
        body: { model: 'acme/image', prompt: 'x' },
        first: 'p2',
        upstreamModel: 'image-mirror',
      },
      {
        path: '/v1/rerank',
        body: { model: 'acme/rerank', query: 'q', documents: ['a'] },
        first: 'p2',
        upstreamModel: 'jina-reranker-v2-base-multilingual',
      },
    ];
    for (const { path, body, first, upstreamModel } of cases) {
      gw().upstream.reset();
      const response = await gw().post(path, { ...body, provider: { order: [first] } }, tenant.inferenceKey);
      const answer = (await response.json()) as Json;
      expect(response.status, JSON.stringify(answer)).toBe(200);
      expect(answer.gateway.provider).toBe(first);
      expect(gw().upstream.calls.map((c) => [c.provider, c.body.model])).toEqual([[first, upstreamModel]]);
      expect(gw().upstream.calls[0]!.body.provider).toBeUndefined();
    }
  });

  it(':free on a zero-price embedding route is served at cost 0 with no ledger entry', async () => {
    const tenant = await gw().newTenant();
    const response = await gw().post(
      '/v1/embeddings',
      { model: 'acme/embed-free:free', input: 'free' },
      tenant.inferenceKey,
    );
    const { body } = await expectCharged(gw(), tenant, response, {
      costMicros: 0,
      costUsd: '0.000000',
      model: 'acme/embed-free',
      provider: 'p1',
    });
    expect(body.gateway.waived).toBeUndefined();
    expect(gw().upstream.calls[0]!.body.model).toBe('embed-free-1');
  });

  // Every route of these models has a non-zero price for the unit its type is charged in.
  for (const { path, endpoint, body } of ENDPOINTS) {
    it(`:free with no zero-price route → 402 no_free_route on ${path}, nothing sent or charged`, async () => {
      const tenant = await gw().newTenant();
      const response = await gw().post(path, { ...body, model: `${body.model}:free` }, tenant.inferenceKey);
      await expectRefused(gw(), tenant, response, { status: 402, code: 'no_free_route', endpoint });
    });
  }

  it('provider.sort "price" ranks routes by the price their type is charged in (image, search)', async () => {
    const tenant = await gw().newTenant();
    const cases = [
      // p2 ($0.05 per image) is listed first; p1 ($0.04) is cheaper.
      {
        path: '/v1/images/generations',
        body: { model: 'acme/image-dear-first', prompt: 'x' },
        cheapest: 'p1',
      },
      // p2 ($0.0025 per search unit) is listed first; co ($0.002) is cheaper.
      {
        path: '/v1/rerank',
        body: { model: 'acme/rerank-dear-first', query: 'q', documents: ['a'] },
        cheapest: 'co',
      },
    ];
    const served: string[] = [];
    for (const { path, body } of cases) {
      gw().upstream.reset();
      const response = await gw().post(path, { ...body, provider: { sort: 'price' } }, tenant.inferenceKey);
      const answer = (await response.json()) as Json;
      expect(response.status, JSON.stringify(answer)).toBe(200);
      served.push(answer.gateway.provider);
    }
    expect(served).toEqual(cases.map((c) => c.cheapest));
  });

  it('the per-key rpm counts every inference endpoint, refusals included; the one over it is a recorded 429', async () => {
    const tenant = await gw().newTenant(PRICES.imageP2 - 1, { defaultRpm: 3 });
    const statuses: number[] = [];
    statuses.push((await gw().post('/v1/embeddings', ENDPOINTS[0]!.body, tenant.inferenceKey)).status);
    // Refused by the pre-flight (one image costs more than the balance), still counted.
    statuses.push(
      (await gw().post('/v1/images/generations', ENDPOINTS[1]!.body, tenant.inferenceKey)).status,
    );
    statuses.push((await gw().post('/v1/rerank', ENDPOINTS[2]!.body, tenant.inferenceKey)).status);
    // Reads do not count.
    expect((await gw().get('/v1/usage', tenant.inferenceKey)).status).toBe(200);
    const limited = await gw().post('/v1/embeddings', ENDPOINTS[0]!.body, tenant.inferenceKey);
    expect(statuses).toEqual([200, 402, 200]);
    const body = (await limited.json()) as Json;
    expect(limited.status).toBe(429);
    expect(body.error.code).toBe('rate_limited');
    expect(gw().upstream.calls).toHaveLength(2);
    const record = await gw().generation(requestIdOf(limited), tenant.inferenceKey);
    expect(record).toMatchObject({
      endpoint: 'embeddings',
      status: 'refused',
      http_status: 429,
      cost_micros: 0,
    });
  });

  it('GET /v1/models lists each model with its type and the pricing keys its type uses', async () => {
    const response = await gw().get('/v1/models', null);
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as Json;
    const byId = new Map<string, Json>(data.map((m: Json) => [m.id, m]));
    expect(byId.get('acme/chat')).toMatchObject({
      type: 'chat',
      max_output_tokens: 100,
      pricing: { prompt: '1', completion: '2' },
    });
    expect(byId.get('acme/embed')).toMatchObject({
      type: 'embedding',
      max_output_tokens: null,
      available: true,
    });
    expect(byId.get('acme/embed').pricing).toEqual({ prompt: '0.02' });
    expect(byId.get('acme/embed-free').pricing).toEqual({ prompt: '0' });
    expect(byId.get('acme/image')).toMatchObject({ type: 'image', context_length: null });
    expect(byId.get('acme/image').pricing).toEqual({ image: '0.04' });
    expect(byId.get('acme/rerank')).toMatchObject({ type: 'rerank' });
    expect(byId.get('acme/rerank').pricing).toEqual({ search: '0.002' });
    expect(byId.get('acme/rerank-jina').pricing).toEqual({ search: '0.001' });

    const tenant = await gw().newTenant();
    const endpoints = await gw().get('/v1/models/acme/rerank/endpoints', tenant.inferenceKey);
    expect(((await endpoints.json()) as Json).data.endpoints).toEqual([
      {
        provider: 'co',
        format: 'cohere',
        upstream_model: 'rerank-v3.5',
        available: true,
        pricing: { search: '0.002' },
      },
      {
        provider: 'p2',
        format: 'openai',
        upstream_model: 'jina-reranker-v2-base-multilingual',
        available: true,
        pricing: { search: '0.0025' },
      },
    ]);
  });
});
