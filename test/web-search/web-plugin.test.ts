import { expect, it } from 'vitest';
import {
  chatStreamAnswer,
  describeOnEachInferenceStorage,
  expectCharged,
  expectRefused,
  type InferenceGateway,
  inferenceConfig,
  type Json,
  openAIError,
  requestIdOf,
  type UpstreamCall,
} from '../helpers/inference-wire.js';
import { dataChunks, parseSse } from '../helpers/sse.js';
import type { Tenant } from '../helpers/tenant.js';
import {
  CHAT_TOKENS_MICROS,
  DEFAULT_FEE_MICROS,
  exaAnswer,
  RESULTS,
  webSearchConfig,
} from './web-search-config.js';

/*
 * The web-search plugin (product.md "Web-search plugin"): `plugins: [{id: "web"}]` or `:online`; one
 * `POST {base_url}/search` to the first usable `web-search` backend, with `x-api-key` and
 * `{query, numResults}`; the results as a system message above the last user message; `url_citation`
 * annotations; the fee (`price_per_search`; a cost the backend reports is not charged) on top of
 * tokens, never waived, also
 * charged when the model fails; `503 plugin_unavailable` (not charged) when the search cannot run.
 */

const ask = (extra: Record<string, unknown> = {}): Json => ({
  model: 'acme/chat',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello.' },
    { role: 'assistant', content: 'Hi.' },
    { role: 'user', content: 'What is new in Node?' },
  ],
  ...extra,
});

/** The charge entries of the tenant: exactly one, of `micros`, for the request. */
async function expectOneCharge(gw: InferenceGateway, tenant: Tenant, requestId: string, micros: number) {
  expect(await gw.charges(tenant.account.id)).toMatchObject([{ amountMicros: -micros, requestId }]);
  expect(await gw.balance(tenant.account.id)).toBe(tenant.account.balanceMicros - micros);
}

describeOnEachInferenceStorage(
  'web plugin',
  (gw) => {
    it('searches, puts the results above the last user message, cites them and charges tokens + price_per_search', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer(RESULTS, 0.005));
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'web', max_results: 3 }] }),
        tenant.inferenceKey,
      );
      // The backend reported $0.005: the caller pays the flat price_per_search all the same.
      const fee = DEFAULT_FEE_MICROS;
      const { body } = await expectCharged(gw(), tenant, response, {
        costMicros: CHAT_TOKENS_MICROS + fee,
        costUsd: '0.007022',
        model: 'acme/chat',
        provider: 'p1',
      });
      expect(body.gateway.cost_breakdown).toMatchObject({
        tokens_micros: CHAT_TOKENS_MICROS,
        web_search_micros: fee,
        tokens_usd: 0.000022,
        web_search_usd: 0.007,
      });
      expect(body.choices[0].message.annotations).toEqual(
        RESULTS.map((r) => ({ type: 'url_citation', url_citation: { url: r.url, title: r.title } })),
      );

      const [search] = gw().upstream.callsTo('exa');
      expect(gw().upstream.callsTo('exa')).toHaveLength(1);
      expect(search!.path).toBe('/search');
      expect(search!.headers['x-api-key']).toBe('exa-key');
      expect(search!.headers.authorization).toBeUndefined();
      expect(search!.body).toEqual({ query: 'What is new in Node?', numResults: 3 });
      expect(gw().upstream.callsTo('exa-off')).toEqual([]);

      const [chat] = gw().upstream.callsTo('p1');
      expect(chat!.body.plugins).toBeUndefined();
      expect(chat!.body.model).toBe('gpt-4o-mini');
      const messages = chat!.body.messages as Json[];
      expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'system', 'user']);
      expect(messages[4]).toEqual({ role: 'user', content: 'What is new in Node?' });
      for (const r of RESULTS) {
        expect(messages[3].content).toContain(r.title);
        expect(messages[3].content).toContain(r.url);
        expect(messages[3].content).toContain(r.text);
      }
      expect(messages[3].content).toContain('web search');
      const charges = await gw().charges(tenant.account.id);
      expect(charges[0]!.description).toContain('1 web search');
      expect(charges[0]!.description).not.toContain('Node');
    });

    it('`:online` is the model with the web plugin at its defaults, charged at price_per_search without a reported cost', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer(RESULTS, null));
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ model: 'acme/chat:online' }),
        tenant.inferenceKey,
      );
      const { body, record } = await expectCharged(gw(), tenant, response, {
        costMicros: CHAT_TOKENS_MICROS + DEFAULT_FEE_MICROS,
        costUsd: '0.007022',
        model: 'acme/chat',
        provider: 'p1',
      });
      expect(body.gateway.cost_breakdown).toMatchObject({ web_search_micros: DEFAULT_FEE_MICROS });
      expect(body.choices[0].message.annotations).toHaveLength(3);
      expect(gw().upstream.callsTo('exa')[0]!.body).toEqual({ query: 'What is new in Node?', numResults: 5 });
      expect(record.requested_model ?? 'acme/chat:online').toBe('acme/chat:online');
    });

    it('a search_prompt replaces the default introduction', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer());
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'web', search_prompt: 'Sources found today:' }] }),
        tenant.inferenceKey,
      );
      expect(response.status).toBe(200);
      const messages = gw().upstream.callsTo('p1')[0]!.body.messages as Json[];
      expect(messages[3].content.startsWith('Sources found today:')).toBe(true);
      expect(messages[3].content).not.toContain('A web search was run');
    });

    it('streams the citations in a delta before the terminal chunk, and the fee in its gateway object', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer(RESULTS, 0.005));
      gw().upstream.on(
        'p1',
        chatStreamAnswer({ text: 'Node 24 is out.', usage: { prompt: 12, completion: 5 } }),
      );
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ stream: true, plugins: [{ id: 'web' }] }),
        tenant.inferenceKey,
      );
      expect(response.status).toBe(200);
      const chunks = dataChunks(parseSse(await response.text()));
      const terminal = chunks.at(-1);
      const annotated = chunks.findIndex((c: Json) => c.choices?.[0]?.delta?.annotations);
      expect(annotated).toBeGreaterThanOrEqual(0);
      expect(annotated).toBeLessThan(chunks.length - 1);
      expect(chunks[annotated].choices[0].delta.annotations).toEqual(
        RESULTS.map((r) => ({ type: 'url_citation', url_citation: { url: r.url, title: r.title } })),
      );
      expect(terminal.gateway).toMatchObject({
        cost_micros: CHAT_TOKENS_MICROS + DEFAULT_FEE_MICROS,
        cost_breakdown: { tokens_micros: CHAT_TOKENS_MICROS, web_search_micros: DEFAULT_FEE_MICROS },
      });
      await expectOneCharge(gw(), tenant, requestIdOf(response), CHAT_TOKENS_MICROS + DEFAULT_FEE_MICROS);
    });

    it('charges the fee on a free route (`:online:free`), where the tokens cost nothing', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer(RESULTS, null));
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ model: 'acme/free:online:free' }),
        tenant.inferenceKey,
      );
      const { body } = await expectCharged(gw(), tenant, response, {
        costMicros: DEFAULT_FEE_MICROS,
        costUsd: '0.007000',
        model: 'acme/free',
        provider: 'p1',
      });
      expect(body.gateway.cost_breakdown).toMatchObject({
        tokens_micros: 0,
        web_search_micros: DEFAULT_FEE_MICROS,
      });
    });

    it('charges the fee when a waiver zeroes the tokens (zero_completion)', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer(RESULTS, 0.005));
      gw().upstream.on('p1', (call: UpstreamCall) => ({
        id: 'chatcmpl-empty',
        object: 'chat.completion',
        created: 1,
        model: call.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 },
      }));
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'web' }] }),
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status).toBe(200);
      expect(body.gateway).toMatchObject({
        cost_micros: DEFAULT_FEE_MICROS,
        waived: 'zero_completion',
        cost_breakdown: { tokens_micros: 0, web_search_micros: DEFAULT_FEE_MICROS },
      });
      await expectOneCharge(gw(), tenant, requestIdOf(response), DEFAULT_FEE_MICROS);
    });

    it('charges the fee alone when the model then fails', async () => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', exaAnswer(RESULTS, 0.005));
      gw().upstream.on('p1', openAIError(500));
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'web' }] }),
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status).toBe(502);
      expect(body.error.code).toBe('upstream_error');
      await expectOneCharge(gw(), tenant, requestIdOf(response), DEFAULT_FEE_MICROS);
      const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
      expect(record).toMatchObject({ status: 'error', http_status: 502, cost_micros: DEFAULT_FEE_MICROS });
    });

    it.each([
      ['the backend answers 500', () => openAIError(500, 'search is down')],
      ['the backend answers malformed JSON', () => ({ hits: [] })],
      ['the backend answers a non-JSON body', () => new Response('<html>', { status: 200 })],
      [
        'the backend times out',
        () =>
          new Response(new ReadableStream({ start() {} }), {
            headers: { 'content-type': 'application/json' },
          }),
      ],
    ])('503 plugin_unavailable, not charged, nothing sent to the model, when %s', async (_, reply) => {
      const tenant = await gw().newTenant();
      gw().upstream.on('exa', reply());
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'web' }] }),
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(503);
      expect(body.error.code).toBe('plugin_unavailable');
      expect(body.error.message).not.toContain('search is down');
      expect(gw().upstream.callsTo('exa')).toHaveLength(1);
      expect(gw().upstream.callsTo('p1')).toEqual([]);
      expect(await gw().charges(tenant.account.id)).toEqual([]);
      expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
      const account = await gw().storage.getAccount(tenant.account.id);
      expect(account).toBeTruthy();
      const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
      expect(record).toMatchObject({
        status: 'refused',
        http_status: 503,
        error: { code: 'plugin_unavailable' },
        cost_micros: 0,
      });
      // The hold is released: the whole balance can be held again.
      const again = await gw().post('/v1/chat/completions', ask({ max_tokens: 10 }), tenant.inferenceKey);
      expect(again.status).toBe(200);
    });

    it.each([0, 11, 2.5, '3'])('max_results %s → 400 invalid_request', async (max) => {
      const tenant = await gw().newTenant();
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'web', max_results: max }] }),
        tenant.inferenceKey,
      );
      const { error } = await expectRefused(gw(), tenant, response, {
        status: 400,
        code: 'invalid_request',
        endpoint: 'chat.completions',
      });
      expect(error.message).toContain('max_results');
    });

    it('an unknown plugin id → 503 plugin_unavailable before anything is held', async () => {
      const tenant = await gw().newTenant();
      const response = await gw().post(
        '/v1/chat/completions',
        ask({ plugins: [{ id: 'file-parser' }] }),
        tenant.inferenceKey,
      );
      await expectRefused(gw(), tenant, response, {
        status: 503,
        code: 'plugin_unavailable',
        endpoint: 'chat.completions',
      });
    });

    it('the pre-flight holds tokens, the most the results can add, and the fee: 402 one micro short', async () => {
      // Worst case of `[{"role":"user","content":"hi"}]` (32 characters → 8 tokens) + 100 output
      // tokens on acme/chat: 8 × 1 + 100 × 2 = 208 micros. The results of 5 searches at their bounds
      // (title 300, url 2,048, text 2,000 characters, each character held as a token, with their
      // framing) and the default introduction: 21,957 prompt tokens × 1 = 21,957 micros. The fee
      // 7,000. In all 29,165.
      const tenant = await gw().newTenant(29_164);
      const body = { model: 'acme/chat', messages: [{ role: 'user', content: 'hi' }] };
      const refused = await gw().post(
        '/v1/chat/completions',
        { ...body, plugins: [{ id: 'web' }] },
        tenant.inferenceKey,
      );
      const { error } = await expectRefused(gw(), tenant, refused, {
        status: 402,
        code: 'insufficient_credit',
        endpoint: 'chat.completions',
      });
      expect(error.message).toContain('$0.029165');
      const plain = await gw().post('/v1/chat/completions', body, tenant.inferenceKey);
      expect(plain.status).toBe(200);
    });

    it('a web-plugin request is not served from the response cache', async () => {
      const tenant = await gw().newTenant();
      const cache = { 'x-gateway-cache': 'true' };
      gw().upstream.on('exa', exaAnswer(RESULTS, 0.005), exaAnswer(RESULTS, 0.005));
      for (let i = 0; i < 2; i++) {
        const response = await gw().post(
          '/v1/chat/completions',
          ask({ plugins: [{ id: 'web' }] }),
          tenant.inferenceKey,
          cache,
        );
        expect(response.status).toBe(200);
        expect(response.headers.get('x-gateway-cache')).toBeNull();
      }
      expect(gw().upstream.callsTo('exa')).toHaveLength(2);
      expect(gw().upstream.callsTo('p1')).toHaveLength(2);
      expect(await gw().charges(tenant.account.id)).toHaveLength(2);
    });
  },
  webSearchConfig,
);

describeOnEachInferenceStorage(
  'web plugin without a backend',
  (gw) => {
    it('503 plugin_unavailable, not charged, nothing sent anywhere', async () => {
      const tenant = await gw().newTenant();
      const response = await gw().post(
        '/v1/chat/completions',
        { model: 'acme/chat:online', messages: [{ role: 'user', content: 'news?' }] },
        tenant.inferenceKey,
      );
      const { error } = await expectRefused(gw(), tenant, response, {
        status: 503,
        code: 'plugin_unavailable',
        endpoint: 'chat.completions',
      });
      expect(error.message).toContain('web-search');
    });
  },
  inferenceConfig,
);
