import { expect, it } from 'vitest';
import {
  accountFeaturesConfig,
  addPreset,
  chatBody,
  DEFAULT_CHAT_COST_MICROS,
  usageTotals,
} from '../helpers/account-features.js';
import {
  chatStreamAnswer,
  DEFAULT_CHAT_REPLY,
  describeOnEachInferenceStorage,
  expectCharged,
  type Json,
  requestIdOf,
  startKitGateway,
} from '../helpers/inference-wire.js';
import { openAiCompletion } from '../helpers/records-wire.js';
import { contentOf, dataChunks, parseSse } from '../helpers/sse.js';

/*
 * The response cache (product.md "Response cache"): opt-in per request (`X-Gateway-Cache: true`) or
 * by a preset; one account's entries only; keyed by the request as sent upstream (not `metadata`,
 * `stream` or headers). A hit costs nothing (`waived: "cache hit"`, `saved_usd` = the original
 * cost), leaves no ledger entry, says `cache_hit` on the record and in `cache_hits`, and is streamed
 * or not as asked; `X-Gateway-Cache: HIT|MISS`. Bodies are sealed in the database.
 */

const CACHE = { 'x-gateway-cache': 'true' };

describeOnEachInferenceStorage(
  'Response cache',
  (gw) => {
    it('a miss goes upstream and is charged; the same request then hits: cost 0, waived "cache hit", saved_usd = the original cost', async () => {
      const tenant = await gw().newTenant();
      const miss = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      expect(miss.headers.get('x-gateway-cache')).toBe('MISS');
      const { body: first } = await expectCharged(gw(), tenant, miss, {
        costMicros: DEFAULT_CHAT_COST_MICROS,
        costUsd: '0.000022',
        model: 'acme/chat',
        provider: 'p1',
      });

      const hit = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      const body = (await hit.json()) as Json;
      expect(hit.status, JSON.stringify(body)).toBe(200);
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      expect(hit.headers.get('x-gateway-cost-usd')).toBe('0.000000');
      expect(gw().upstream.calls).toHaveLength(1);
      expect(body.choices).toEqual(first.choices);
      expect(body.usage).toEqual(first.usage);
      expect(body.gateway).toMatchObject({
        request_id: requestIdOf(hit),
        cost_micros: 0,
        cost_usd: 0,
        waived: 'cache hit',
        saved_usd: DEFAULT_CHAT_COST_MICROS / 1e6,
        model: 'acme/chat',
        provider: 'p1',
      });
      expect(await gw().charges(tenant.account.id)).toHaveLength(1);
      const record = await gw().generation(requestIdOf(hit), tenant.inferenceKey);
      expect(record).toMatchObject({
        status: 'success',
        cache_hit: true,
        cost_micros: 0,
        waived: 'cache hit',
        saved_micros: DEFAULT_CHAT_COST_MICROS,
      });
      expect(await usageTotals(gw(), tenant)).toMatchObject({ cache_hits: 1, requests: 2 });
    });

    it('without the header nothing is cached and no X-Gateway-Cache header is sent', async () => {
      const tenant = await gw().newTenant();
      for (let i = 0; i < 2; i++) {
        const response = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
        expect(response.status).toBe(200);
        expect(response.headers.get('x-gateway-cache')).toBeNull();
      }
      expect(gw().upstream.calls).toHaveLength(2);
    });

    it('a hit is streamed when the request asks for a stream: the cached text, then the usage chunk with waived "cache hit", then [DONE]', async () => {
      const tenant = await gw().newTenant();
      await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      const hit = await gw().post(
        '/v1/chat/completions',
        chatBody({ stream: true }),
        tenant.inferenceKey,
        CACHE,
      );
      expect(hit.status).toBe(200);
      expect(hit.headers.get('content-type')).toContain('text/event-stream');
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      const text = await hit.text();
      const events = parseSse(text);
      expect(contentOf(events)).toBe(DEFAULT_CHAT_REPLY.text);
      expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
      const terminal = dataChunks(events).at(-1);
      expect(terminal.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
      expect(terminal.gateway).toMatchObject({ cost_micros: 0, waived: 'cache hit' });
      expect(gw().upstream.calls).toHaveLength(1);
    });

    it('a streamed miss fills the cache: a later non-streamed request gets the assembled answer, tool call included', async () => {
      const tenant = await gw().newTenant();
      const reply = {
        text: 'Let me check.',
        toolCall: { id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
        usage: { prompt: 30, completion: 9 },
      };
      gw().upstream.on('p1', chatStreamAnswer(reply));
      const miss = await gw().post(
        '/v1/chat/completions',
        chatBody({ stream: true }),
        tenant.inferenceKey,
        CACHE,
      );
      expect(miss.headers.get('x-gateway-cache')).toBe('MISS');
      await miss.text();
      const hit = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      const body = (await hit.json()) as Json;
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      const expected = openAiCompletion(reply) as Json;
      expect(body.choices[0].message).toMatchObject({
        content: 'Let me check.',
        tool_calls: expected.choices[0].message.tool_calls,
      });
      expect(body.choices[0].finish_reason).toBe('tool_calls');
      expect(body.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 9 });
      expect(body.gateway.saved_usd).toBe((30 * 1 + 9 * 2) / 1e6);
    });

    it('metadata does not change the key; any other parameter does', async () => {
      const tenant = await gw().newTenant();
      await gw().post(
        '/v1/chat/completions',
        chatBody({ metadata: { run: '1' } }),
        tenant.inferenceKey,
        CACHE,
      );
      const sameButLabels = await gw().post(
        '/v1/chat/completions',
        chatBody({ metadata: { run: '2' } }),
        tenant.inferenceKey,
        CACHE,
      );
      expect(sameButLabels.headers.get('x-gateway-cache')).toBe('HIT');
      const otherTemperature = await gw().post(
        '/v1/chat/completions',
        chatBody({ temperature: 0.5 }),
        tenant.inferenceKey,
        CACHE,
      );
      expect(otherTemperature.headers.get('x-gateway-cache')).toBe('MISS');
      expect(gw().upstream.calls).toHaveLength(2);
    });

    it("another gateway process on the same database and secret hits the stored entry (not only this process's memory)", async () => {
      const tenant = await gw().newTenant();
      await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      const other = await startKitGateway(gw().storage, accountFeaturesConfig, gw().upstream, gw().clock);
      const hit = await other.fetch(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${tenant.inferenceKey}`,
            'content-type': 'application/json',
            ...CACHE,
          },
          body: JSON.stringify(chatBody()),
        }),
      );
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      expect(((await hit.json()) as Json).choices[0].message.content).toBe(DEFAULT_CHAT_REPLY.text);
      expect(gw().upstream.calls).toHaveLength(1);
      await other.close();
    });

    it("one account never hits another account's entry", async () => {
      const a = await gw().newTenant();
      const b = await gw().newTenant();
      await gw().post('/v1/chat/completions', chatBody(), a.inferenceKey, CACHE);
      const other = await gw().post('/v1/chat/completions', chatBody(), b.inferenceKey, CACHE);
      expect(other.headers.get('x-gateway-cache')).toBe('MISS');
      expect(gw().upstream.calls).toHaveLength(2);
    });

    it.each([['0'], ['86401'], ['soon']])(
      'X-Gateway-Cache-TTL %s is 400 invalid_request naming the header',
      async (ttl) => {
        const tenant = await gw().newTenant();
        const response = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, {
          ...CACHE,
          'x-gateway-cache-ttl': ttl,
        });
        const body = (await response.json()) as Json;
        expect(response.status).toBe(400);
        expect(body.error).toMatchObject({ code: 'invalid_request' });
        expect(body.error.message).toContain('X-Gateway-Cache-TTL');
        expect(gw().upstream.calls).toEqual([]);
      },
    );

    it('an entry lives for its TTL and the sweep deletes it once expired', async () => {
      const tenant = await gw().newTenant();
      await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, {
        ...CACHE,
        'x-gateway-cache-ttl': '60',
      });
      expect(await gw().storage.sweepExpired(Date.now() + 30_000)).toBe(0);
      const hit = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      expect(await gw().storage.sweepExpired(Date.now() + 61_000)).toBeGreaterThanOrEqual(1);
      // 61 s later for the gateway too: the entry is gone from the database and from memory alike.
      gw().clock.offsetMs = 61_000;
      try {
        const after = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
        expect(after.headers.get('x-gateway-cache')).toBe('MISS');
      } finally {
        gw().clock.offsetMs = 0;
      }
    });

    it('embeddings are cached too', async () => {
      const tenant = await gw().newTenant();
      const request = { model: 'acme/embed', input: 'cache me' };
      const miss = await gw().post('/v1/embeddings', request, tenant.inferenceKey, CACHE);
      const first = (await miss.json()) as Json;
      const hit = await gw().post('/v1/embeddings', request, tenant.inferenceKey, CACHE);
      const body = (await hit.json()) as Json;
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      expect(body.data).toEqual(first.data);
      expect(body.gateway).toMatchObject({ cost_micros: 0, waived: 'cache hit' });
      expect(gw().upstream.calls).toHaveLength(1);
    });

    it('a preset with cache: true opts in without the header', async () => {
      const tenant = await gw().newTenant();
      await addPreset(gw(), tenant, { name: 'cached-chat', config: { model: 'acme/chat', cache: true } });
      const request = { model: '@preset/cached-chat', messages: [{ role: 'user', content: 'Say hello.' }] };
      const miss = await gw().post('/v1/chat/completions', request, tenant.inferenceKey);
      expect(miss.headers.get('x-gateway-cache')).toBe('MISS');
      const hit = await gw().post('/v1/chat/completions', request, tenant.inferenceKey);
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      expect(gw().upstream.calls[0]!.body).not.toHaveProperty('cache');
      expect(gw().upstream.calls[0]!.body).not.toHaveProperty('preset');
    });

    it('concurrent identical misses each answer, and leave one whole entry that later hits', async () => {
      const tenant = await gw().newTenant();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE),
        ),
      );
      for (const answer of answers) expect(answer.status).toBe(200);
      const hit = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey, CACHE);
      expect(hit.headers.get('x-gateway-cache')).toBe('HIT');
      expect(((await hit.json()) as Json).choices[0].message.content).toBe(DEFAULT_CHAT_REPLY.text);
    });
  },
  accountFeaturesConfig,
);
