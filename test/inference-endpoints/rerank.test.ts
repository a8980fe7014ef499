import { expect, it } from 'vitest';
import {
  COHERE_RERANK_FIXTURE,
  cohereError400,
  cohereRerankAnswer,
  describeOnEachInferenceStorage,
  expectCharged,
  expectRefused,
  expectUpstreamFailure,
  type Json,
  jinaRerankAnswer,
  openAIError,
  PRICES,
  requestIdOf,
} from '../helpers/inference-wire.js';

/**
 * `POST /v1/rerank` in-process (product.md "POST /v1/rerank", "Rerank on a Jina-shaped route"):
 * `{id, model, results sorted by score, usage: {search_units}}`, the Cohere v2 body upstream
 * (documents flattened to strings), charged the billed units Cohere reports, else ⌈documents / 100⌉
 * on a Jina-shaped route, held at ⌈documents / 100⌉ × the highest `search` price.
 */
describeOnEachInferenceStorage('POST /v1/rerank', (gw) => {
  const rerank = (body: unknown, key: string) => gw().post('/v1/rerank', body, key);
  const docs = (count: number) => Array.from({ length: count }, (_, i) => `document ${i}`);
  const FIVE = [
    'Carson City is the capital city of the American state of Nevada.',
    { text: 'The Commonwealth of the Northern Mariana Islands is a group of islands in the Pacific Ocean.' },
    'Capitalization or capitalisation in English grammar is the use of a capital letter.',
    { text: 'Washington, D.C. is the capital of the United States.' },
    'Capital punishment has existed in the United States since before it was a country.',
  ];
  const TEXTS = FIVE.map((d) => (typeof d === 'string' ? d : d.text));

  it('Cohere route: v2 body upstream ({text} flattened), results best first, billed units charged', async () => {
    const tenant = await gw().newTenant();
    const response = await rerank(
      {
        model: 'acme/rerank',
        query: 'What is the capital of the United States?',
        documents: FIVE,
        top_n: 3,
        return_documents: true,
        metadata: { index: 'capitals' },
        provider: { order: ['co'] },
        models: ['acme/rerank-jina'],
      },
      tenant.inferenceKey,
    );
    const { body, record } = await expectCharged(gw(), tenant, response, {
      costMicros: PRICES.rerankCohere,
      costUsd: '0.002000',
      model: 'acme/rerank',
      provider: 'co',
    });
    expect(body).toEqual({
      id: COHERE_RERANK_FIXTURE.id,
      model: 'acme/rerank',
      results: [
        { index: 3, relevance_score: 0.999071, document: { text: TEXTS[3] } },
        { index: 4, relevance_score: 0.7867867, document: { text: TEXTS[4] } },
        { index: 0, relevance_score: 0.32713068, document: { text: TEXTS[0] } },
      ],
      usage: { search_units: 1 },
      gateway: body.gateway,
    });

    const [call, ...more] = gw().upstream.calls;
    expect(more).toEqual([]);
    expect(call!.url).toBe('http://upstream.test/co/v2/rerank');
    expect(call!.headers.authorization).toBe('Bearer sk-co');
    expect(call!.body).toEqual({
      model: 'rerank-v3.5',
      query: 'What is the capital of the United States?',
      documents: TEXTS,
      top_n: 3,
    });
    expect(record).toMatchObject({ endpoint: 'rerank', metadata: { index: 'capitals' } });

    const { data } = (await (await gw().get('/v1/usage?days=1', tenant.inferenceKey)).json()) as Json;
    expect(data.totals).toMatchObject({ requests: 1, errors: 0, cost_micros: PRICES.rerankCohere });
    expect(data.by_model).toMatchObject([{ model: 'acme/rerank', requests: 1 }]);
  });

  it('Cohere route: the units Cohere bills are charged, not ⌈documents / 100⌉ (that only when it bills none)', async () => {
    const tenant = await gw().newTenant();
    // 250 documents would be 3 units; Cohere bills 2.
    gw().upstream.on('co', cohereRerankAnswer({ searchUnits: 2 }));
    const response = await rerank(
      { model: 'acme/rerank', query: 'q', documents: docs(250) },
      tenant.inferenceKey,
    );
    const { body } = await expectCharged(gw(), tenant, response, {
      costMicros: 2 * PRICES.rerankCohere,
      costUsd: '0.004000',
      model: 'acme/rerank',
      provider: 'co',
    });
    expect(body.usage).toEqual({ search_units: 2 });
    expect(body.results.map((r: Json) => r.index)).toEqual([3, 4, 0]);
    expect(body.results[0].document).toBeUndefined();

    // No billed units in the answer: ⌈250 / 100⌉ = 3.
    const other = await gw().newTenant();
    gw().upstream.on('co', cohereRerankAnswer({ searchUnits: null }));
    const unbilled = await rerank(
      { model: 'acme/rerank', query: 'q', documents: docs(250) },
      other.inferenceKey,
    );
    const { body: counted } = await expectCharged(gw(), other, unbilled, {
      costMicros: 3 * PRICES.rerankCohere,
      costUsd: '0.006000',
      model: 'acme/rerank',
      provider: 'co',
    });
    expect(counted.usage).toEqual({ search_units: 3 });
  });

  it('Jina-shaped route: POST {base_url}/rerank, search_units = ⌈documents / 100⌉, the catalogue id as model', async () => {
    const tenant = await gw().newTenant();
    const response = await rerank(
      {
        model: 'acme/rerank-jina',
        query: 'Organic skincare products for sensitive skin',
        documents: docs(101),
        return_documents: false,
      },
      tenant.inferenceKey,
    );
    const { body } = await expectCharged(gw(), tenant, response, {
      costMicros: 2 * PRICES.rerankJinaP1,
      costUsd: '0.002000',
      model: 'acme/rerank-jina',
      provider: 'p1',
    });
    expect(body).toEqual({
      id: requestIdOf(response),
      model: 'acme/rerank-jina',
      results: [
        { index: 0, relevance_score: 0.8783142566680908 },
        { index: 2, relevance_score: 0.7624675869941711 },
      ],
      usage: { search_units: 2 },
      gateway: body.gateway,
    });
    const call = gw().upstream.calls[0]!;
    expect(call.url).toBe('http://upstream.test/p1/v1/rerank');
    expect(call.body).toEqual({
      model: 'jina-reranker-v2-base-multilingual',
      query: 'Organic skincare products for sensitive skin',
      documents: docs(101),
      return_documents: false,
    });
  });

  it('results come back sorted by score and cut to top_n, whatever order the upstream used', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on(
      'p1',
      jinaRerankAnswer({
        results: [
          { index: 1, relevance_score: 0.1 },
          { index: 3, relevance_score: 0.9 },
          { index: 0, relevance_score: 0.5 },
          { index: 2, relevance_score: 0.7 },
        ],
      }),
    );
    const response = await rerank(
      { model: 'acme/rerank-jina', query: 'q', documents: FIVE, top_n: 3, return_documents: true },
      tenant.inferenceKey,
    );
    const { body } = await expectCharged(gw(), tenant, response, {
      costMicros: PRICES.rerankJinaP1,
      costUsd: '0.001000',
      model: 'acme/rerank-jina',
      provider: 'p1',
    });
    expect(body.results).toEqual([
      { index: 3, relevance_score: 0.9, document: { text: TEXTS[3] } },
      { index: 2, relevance_score: 0.7, document: { text: TEXTS[2] } },
      { index: 0, relevance_score: 0.5, document: { text: TEXTS[0] } },
    ]);
    expect(gw().upstream.calls[0]!.body.documents).toEqual(TEXTS);
  });

  it('fails over from Cohere (503) to the Jina-shaped route of the same model, charged at its price', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('co', openAIError(503));
    const response = await rerank({ model: 'acme/rerank', query: 'q', documents: FIVE }, tenant.inferenceKey);
    const { body, record } = await expectCharged(gw(), tenant, response, {
      costMicros: PRICES.rerankJinaP2,
      costUsd: '0.002500',
      model: 'acme/rerank',
      provider: 'p2',
      attempts: 2,
    });
    expect(body.usage).toEqual({ search_units: 1 });
    expect(gw().upstream.calls.map((c) => c.url)).toEqual([
      'http://upstream.test/co/v2/rerank',
      'http://upstream.test/p2/v1/rerank',
    ]);
    expect(gw().upstream.calls[1]!.body.model).toBe('jina-reranker-v2-base-multilingual');
    expect(record.routing.failures).toEqual([{ provider: 'co', status: 503, reason: 'http_503' }]);
  });

  it('every route fails → 502 upstream_error, nothing charged, an error record with the trail', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('co', openAIError(503));
    gw().upstream.on('p2', openAIError(503));
    const response = await rerank({ model: 'acme/rerank', query: 'q', documents: FIVE }, tenant.inferenceKey);
    await expectUpstreamFailure(gw(), tenant, response, {
      endpoint: 'rerank',
      failures: [
        { provider: 'co', status: 503, reason: 'http_503' },
        { provider: 'p2', status: 503, reason: 'http_503' },
      ],
    });
  });

  it('a Cohere 400 is returned at once as 400 invalid_request naming the provider, never charged', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('co', cohereError400());
    const response = await rerank({ model: 'acme/rerank', query: 'q', documents: FIVE }, tenant.inferenceKey);
    const body = (await response.json()) as Json;
    expect(response.status).toBe(400);
    expect(body.error.code).toBe('invalid_request');
    expect(body.error.message).toContain('co');
    expect(body.error.message).toContain('list of documents must not be empty');
    expect(gw().upstream.calls.map((c) => c.provider)).toEqual(['co']);
    expect(await gw().charges(tenant.account.id)).toEqual([]);
    expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
  });

  it('a result index past the documents makes the answer unusable: fails over, never charged for it', async () => {
    const tenant = await gw().newTenant();
    // The recorded answer ranks indexes 3, 4, 0: with 3 documents it points past them.
    gw().upstream.on('co', cohereRerankAnswer());
    const response = await rerank(
      { model: 'acme/rerank', query: 'q', documents: docs(3) },
      tenant.inferenceKey,
    );
    const { record } = await expectCharged(gw(), tenant, response, {
      costMicros: PRICES.rerankJinaP2,
      costUsd: '0.002500',
      model: 'acme/rerank',
      provider: 'p2',
      attempts: 2,
    });
    expect(record.routing.failures).toMatchObject([{ provider: 'co', status: 502 }]);
  });

  it('pre-flight: ⌈documents / 100⌉ × the highest search price; one micro short → 402, nothing sent', async () => {
    // 250 documents → 3 units × $0.0025 (p2, the dearer route) = 7,500 micros.
    const worstCase = 3 * PRICES.rerankJinaP2;
    const poor = await gw().newTenant(worstCase - 1);
    const refused = await rerank(
      { model: 'acme/rerank', query: 'q', documents: docs(250) },
      poor.inferenceKey,
    );
    await expectRefused(gw(), poor, refused, {
      status: 402,
      code: 'insufficient_credit',
      endpoint: 'rerank',
    });

    const enough = await gw().newTenant(worstCase);
    const served = await rerank(
      { model: 'acme/rerank', query: 'q', documents: docs(250) },
      enough.inferenceKey,
    );
    // Served by Cohere, which bills the fixture's 1 unit.
    await expectCharged(gw(), enough, served, {
      costMicros: PRICES.rerankCohere,
      costUsd: '0.002000',
      model: 'acme/rerank',
      provider: 'co',
    });
  });

  it('refusals are recorded and never charged: no documents, no query, a chat model, an unknown model', async () => {
    const tenant = await gw().newTenant();
    const cases = [
      { body: { model: 'acme/rerank', query: 'q', documents: [] }, status: 400, code: 'invalid_request' },
      {
        body: { model: 'acme/rerank', query: 'q', documents: [{ title: 'x' }] },
        status: 400,
        code: 'invalid_request',
      },
      { body: { model: 'acme/rerank', documents: ['a'] }, status: 400, code: 'invalid_request' },
      {
        body: { model: 'acme/rerank', query: 'q', documents: ['a'], top_n: 0 },
        status: 400,
        code: 'invalid_request',
      },
      { body: { model: 'acme/chat', query: 'q', documents: ['a'] }, status: 400, code: 'invalid_request' },
      { body: { model: 'acme/nope', query: 'q', documents: ['a'] }, status: 404, code: 'model_not_found' },
    ];
    for (const { body, status, code } of cases) {
      const response = await rerank(body, tenant.inferenceKey);
      const { error, record } = await expectRefused(gw(), tenant, response, {
        status,
        code,
        endpoint: 'rerank',
      });
      if (body.model === 'acme/chat') expect(error.message).toContain('"acme/chat" is a chat model');
      expect(record.requested_model ?? record.model).toBe(body.model);
    }
  });
});
