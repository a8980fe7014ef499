import { expect, it } from 'vitest';
import {
  describeOnEachInferenceStorage,
  expectCharged,
  expectRefused,
  expectUpstreamFailure,
  imagesAnswer,
  type Json,
  openAIError,
  PRICES,
} from '../helpers/inference-wire.js';

/**
 * `POST /v1/images/generations` in-process (product.md "POST /v1/images/generations" and "Pre-flight
 * of images"): OpenAI's request and answer `{created, data, usage?}`, held at `n` × the highest
 * `image` price among the candidate routes, charged for the images actually returned.
 */
describeOnEachInferenceStorage('POST /v1/images/generations', (gw) => {
  const generate = (body: unknown, key: string) => gw().post('/v1/images/generations', body, key);

  it('answers {created, data} with the gateway object, charges images × price, and records it', async () => {
    const tenant = await gw().newTenant();
    const response = await generate(
      {
        model: 'acme/image',
        prompt: 'A cute baby sea otter',
        n: 2,
        size: '1024x1024',
        quality: 'hd',
        style: 'vivid',
        response_format: 'url',
        metadata: { app: 'otters' },
        provider: { order: ['p1'] },
      },
      tenant.inferenceKey,
    );
    const { body, record } = await expectCharged(gw(), tenant, response, {
      costMicros: 2 * PRICES.imageP1,
      costUsd: '0.080000',
      model: 'acme/image',
      provider: 'p1',
    });
    expect(body).toEqual({
      created: 1589478378,
      data: [{ url: 'https://...' }, { url: 'https://...' }],
      gateway: body.gateway,
    });

    const [call, ...more] = gw().upstream.calls;
    expect(more).toEqual([]);
    expect(call!.url).toBe('http://upstream.test/p1/v1/images/generations');
    expect(call!.headers.authorization).toBe('Bearer sk-p1');
    expect(call!.body).toEqual({
      model: 'dall-e-3',
      prompt: 'A cute baby sea otter',
      n: 2,
      size: '1024x1024',
      quality: 'hd',
      style: 'vivid',
      response_format: 'url',
    });
    expect(record).toMatchObject({ endpoint: 'images.generations', metadata: { app: 'otters' } });

    const { data } = (await (await gw().get('/v1/usage?days=1', tenant.inferenceKey)).json()) as Json;
    expect(data.totals).toMatchObject({ requests: 1, errors: 0, cost_micros: 80_000 });
    expect(data.by_model).toMatchObject([{ model: 'acme/image', requests: 1, cost_micros: 80_000 }]);
  });

  it('b64_json answers (GPT image) pass through untouched, usage and extra fields included', async () => {
    const tenant = await gw().newTenant();
    const response = await generate(
      { model: 'acme/image', prompt: 'A lighthouse at dusk', response_format: 'b64_json' },
      tenant.inferenceKey,
    );
    const { body } = await expectCharged(gw(), tenant, response, {
      costMicros: PRICES.imageP1,
      costUsd: '0.040000',
      model: 'acme/image',
      provider: 'p1',
    });
    const { gateway, ...rest } = body;
    expect(rest).toEqual(imagesAnswer(1, { b64: true }));
    expect(rest.usage.input_tokens_details).toEqual({ text_tokens: 10, image_tokens: 40 });
    expect(gw().upstream.calls[0]!.body.response_format).toBe('b64_json');
  });

  it('charges the images actually returned: fewer than asked costs less; more than asked costs no more than n', async () => {
    const fewer = await gw().newTenant();
    gw().upstream.on('p1', imagesAnswer(1));
    const short = await generate({ model: 'acme/image', prompt: 'three please', n: 3 }, fewer.inferenceKey);
    const { body } = await expectCharged(gw(), fewer, short, {
      costMicros: PRICES.imageP1,
      costUsd: '0.040000',
      model: 'acme/image',
      provider: 'p1',
    });
    expect(body.data).toHaveLength(1);

    const more = await gw().newTenant();
    gw().upstream.on('p1', imagesAnswer(2));
    const extra = await generate({ model: 'acme/image', prompt: 'just one' }, more.inferenceKey);
    await expectCharged(gw(), more, extra, {
      costMicros: PRICES.imageP1,
      costUsd: '0.040000',
      model: 'acme/image',
      provider: 'p1',
    });
  });

  it('fails over: p1 answers 503, p2 serves at its price; attempts and the trail are on the record', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', openAIError(503));
    const response = await generate({ model: 'acme/image', prompt: 'fail over', n: 2 }, tenant.inferenceKey);
    const { record } = await expectCharged(gw(), tenant, response, {
      costMicros: 2 * PRICES.imageP2,
      costUsd: '0.100000',
      model: 'acme/image',
      provider: 'p2',
      attempts: 2,
    });
    expect(gw().upstream.calls.map((c) => [c.url, c.body.model])).toEqual([
      ['http://upstream.test/p1/v1/images/generations', 'dall-e-3'],
      ['http://upstream.test/p2/v1/images/generations', 'image-mirror'],
    ]);
    expect(record.routing.failures).toEqual([{ provider: 'p1', status: 503, reason: 'http_503' }]);
  });

  it('every route fails → 502 upstream_error, nothing charged, the hold released, an error record', async () => {
    // Exactly one worst case of credit: a hold left behind would refuse the next request.
    const tenant = await gw().newTenant(PRICES.imageP2);
    gw().upstream.on('p1', openAIError(503));
    gw().upstream.on('p2', openAIError(502, 'bad gateway'));
    const response = await generate({ model: 'acme/image', prompt: 'nobody home' }, tenant.inferenceKey);
    await expectUpstreamFailure(gw(), tenant, response, {
      endpoint: 'images.generations',
      failures: [
        { provider: 'p1', status: 503, reason: 'http_503' },
        { provider: 'p2', status: 502, reason: 'http_502' },
      ],
    });
    const again = await generate({ model: 'acme/image', prompt: 'second try' }, tenant.inferenceKey);
    expect(again.status).toBe(200);
  });

  it('every route answers 429 → 429 rate_limited with the smallest Retry-After, nothing charged', async () => {
    const tenant = await gw().newTenant();
    const tooMany = (seconds: number) =>
      new Response(JSON.stringify({ error: { message: 'Rate limit reached', type: 'requests' } }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': String(seconds) },
      });
    gw().upstream.on('p1', tooMany(7));
    gw().upstream.on('p2', tooMany(3));
    const response = await generate({ model: 'acme/image', prompt: 'busy' }, tenant.inferenceKey);
    const body = (await response.json()) as Json;
    expect(response.status).toBe(429);
    expect(body.error.code).toBe('rate_limited');
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await gw().charges(tenant.account.id)).toEqual([]);
    const record = await gw().generation(response.headers.get('x-gateway-request-id')!, tenant.inferenceKey);
    expect(record).toMatchObject({ status: 'error', http_status: 429, attempts: 2, cost_micros: 0 });
  });

  it('a 2xx that is not an image answer fails over like a 5xx and is never charged', async () => {
    const tenant = await gw().newTenant();
    gw().upstream.on('p1', { object: 'list', data: [] });
    gw().upstream.on('p2', imagesAnswer(1));
    const response = await generate({ model: 'acme/image', prompt: 'garbled' }, tenant.inferenceKey);
    const { record } = await expectCharged(gw(), tenant, response, {
      costMicros: PRICES.imageP2,
      costUsd: '0.050000',
      model: 'acme/image',
      provider: 'p2',
      attempts: 2,
    });
    expect(record.routing.failures).toMatchObject([{ provider: 'p1', status: 502 }]);
  });

  it('pre-flight: n × the highest image price among the routes; one micro short → 402, nothing sent', async () => {
    // n = 3 at the highest image price (p2, $0.05) = 150,000 micros, though p1 ($0.04) serves first.
    const worstCase = 3 * PRICES.imageP2;
    const poor = await gw().newTenant(worstCase - 1);
    const refused = await generate({ model: 'acme/image', prompt: 'three', n: 3 }, poor.inferenceKey);
    await expectRefused(gw(), poor, refused, {
      status: 402,
      code: 'insufficient_credit',
      endpoint: 'images.generations',
    });

    // n defaults to 1.
    const single = await gw().newTenant(PRICES.imageP2 - 1);
    const one = await generate({ model: 'acme/image', prompt: 'one' }, single.inferenceKey);
    await expectRefused(gw(), single, one, {
      status: 402,
      code: 'insufficient_credit',
      endpoint: 'images.generations',
    });

    const enough = await gw().newTenant(worstCase);
    const served = await generate({ model: 'acme/image', prompt: 'three', n: 3 }, enough.inferenceKey);
    await expectCharged(gw(), enough, served, {
      costMicros: 3 * PRICES.imageP1,
      costUsd: '0.120000',
      model: 'acme/image',
      provider: 'p1',
    });
  });

  it('refusals are recorded and never charged: n 0 or 11, no prompt, an embedding model, an unknown model', async () => {
    const tenant = await gw().newTenant();
    const cases = [
      { body: { model: 'acme/image', prompt: 'x', n: 0 }, status: 400, code: 'invalid_request', says: /n/ },
      { body: { model: 'acme/image', prompt: 'x', n: 11 }, status: 400, code: 'invalid_request', says: /n/ },
      { body: { model: 'acme/image', prompt: 'x', n: 1.5 }, status: 400, code: 'invalid_request', says: /n/ },
      { body: { model: 'acme/image' }, status: 400, code: 'invalid_request', says: /prompt/ },
      {
        body: { model: 'acme/embed', prompt: 'x' },
        status: 400,
        code: 'invalid_request',
        says: /"acme\/embed" is an embedding model/,
      },
      { body: { model: 'acme/nope', prompt: 'x' }, status: 404, code: 'model_not_found', says: /acme\/nope/ },
    ];
    for (const { body, status, code, says } of cases) {
      const response = await generate(body, tenant.inferenceKey);
      const { error, record } = await expectRefused(gw(), tenant, response, {
        status,
        code,
        endpoint: 'images.generations',
      });
      expect(error.message).toMatch(says);
      expect(record.requested_model ?? record.model).toBe(body.model);
    }
  });
});
