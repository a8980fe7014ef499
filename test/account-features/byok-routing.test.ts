import { expect, it } from 'vitest';
import {
  accountFeaturesConfig,
  addByokKey,
  chatBody,
  DEFAULT_CHAT_COST_MICROS,
  usageTotals,
} from '../helpers/account-features.js';
import {
  describeOnEachInferenceStorage,
  expectCharged,
  type Json,
  openAIError,
  requestIdOf,
} from '../helpers/inference-wire.js';
import { dataChunks, parseSse } from '../helpers/sse.js';

/*
 * BYOK on the request path (product.md "BYOK", spec Cost rule 5 and `byok_key_rejected`): a provider
 * the account has its own key for is tried first with that key; served that way it costs nothing
 * (`waived: "byok"`, `saved_usd`), leaves no ledger entry and counts in `byok_requests`. A rejected
 * key is `402 byok_key_rejected` with nothing sent to a paid route; other failures fail over to the
 * paid routes only with `allow_fallback: true`.
 */

const ACCOUNT_KEY = 'sk-account-own-p1';

describeOnEachInferenceStorage(
  'BYOK routing',
  (gw) => {
    it('serves with the account key first: cost 0, waived byok, saved_usd, no ledger entry, record and usage say byok', async () => {
      const tenant = await gw().newTenant();
      await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY });
      const response = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
      const { body, record } = await expectCharged(gw(), tenant, response, {
        costMicros: 0,
        costUsd: '0.000000',
        model: 'acme/chat',
        provider: 'p1',
      });
      expect(gw().upstream.calls).toHaveLength(1);
      expect(gw().upstream.calls[0]!.headers.authorization).toBe(`Bearer ${ACCOUNT_KEY}`);
      expect(body.gateway).toMatchObject({ waived: 'byok', saved_usd: DEFAULT_CHAT_COST_MICROS / 1e6 });
      expect(record).toMatchObject({
        byok: true,
        waived: 'byok',
        saved_micros: DEFAULT_CHAT_COST_MICROS,
        usage: { prompt_tokens: 12, completion_tokens: 5 },
      });
      expect(await usageTotals(gw(), tenant)).toMatchObject({ byok_requests: 1, cost_micros: 0 });
    });

    it('another account with no key of its own pays for the same request with the deployment key', async () => {
      const owner = await gw().newTenant();
      await addByokKey(gw(), owner, { provider: 'p1', api_key: ACCOUNT_KEY });
      const other = await gw().newTenant();
      const response = await gw().post('/v1/chat/completions', chatBody(), other.inferenceKey);
      const { record } = await expectCharged(gw(), other, response, {
        costMicros: DEFAULT_CHAT_COST_MICROS,
        costUsd: '0.000022',
        model: 'acme/chat',
        provider: 'p1',
      });
      expect(record.byok).toBe(false);
      expect(gw().upstream.calls[0]!.headers.authorization).toBe('Bearer sk-p1');
    });

    it.each([401, 403])(
      'an upstream %i on the account key is 402 byok_key_rejected: one call, nothing sent to a paid route, nothing charged',
      async (status) => {
        const tenant = await gw().newTenant();
        await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY, allow_fallback: true });
        gw().upstream.on('p1', openAIError(status, 'Incorrect API key provided'));
        const response = await gw().post(
          '/v1/chat/completions',
          chatBody({ model: 'acme/chat-two' }),
          tenant.inferenceKey,
        );
        const body = (await response.json()) as Json;
        expect(response.status, JSON.stringify(body)).toBe(402);
        expect(body.error.code).toBe('byok_key_rejected');
        expect(gw().upstream.calls).toHaveLength(1);
        expect(await gw().charges(tenant.account.id)).toEqual([]);
        expect(await gw().balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
        const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
        expect(record).toMatchObject({
          status: 'error',
          http_status: 402,
          error: { code: 'byok_key_rejected' },
          cost_micros: 0,
          routing: { failures: [{ provider: 'p1', status, reason: `http_${status}` }] },
        });
        expect(JSON.stringify(record)).not.toContain(ACCOUNT_KEY);
      },
    );

    it('another failure of the account key does not fail over to a paid route without allow_fallback', async () => {
      const tenant = await gw().newTenant();
      await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY });
      gw().upstream.on('p1', openAIError(503));
      const response = await gw().post(
        '/v1/chat/completions',
        chatBody({ model: 'acme/chat-two' }),
        tenant.inferenceKey,
      );
      expect(response.status).toBe(502);
      expect(gw().upstream.calls.map((c) => c.headers.authorization)).toEqual([`Bearer ${ACCOUNT_KEY}`]);
      expect(await gw().charges(tenant.account.id)).toEqual([]);
    });

    it('with allow_fallback it fails over to the paid routes (the same provider with the deployment key first) and charges them', async () => {
      const tenant = await gw().newTenant();
      await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY, allow_fallback: true });
      gw().upstream.on('p1', openAIError(503));
      const response = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
      const { record } = await expectCharged(gw(), tenant, response, {
        costMicros: DEFAULT_CHAT_COST_MICROS,
        costUsd: '0.000022',
        model: 'acme/chat',
        provider: 'p1',
        attempts: 2,
      });
      expect(record.byok).toBe(false);
      expect(gw().upstream.calls.map((c) => c.headers.authorization)).toEqual([
        `Bearer ${ACCOUNT_KEY}`,
        'Bearer sk-p1',
      ]);
    });

    it('holds nothing for a request only the account key can serve: an account with no credit is served', async () => {
      const tenant = await gw().newTenant(0);
      const refused = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
      expect(refused.status).toBe(402);
      await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY });
      const response = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
      expect(response.status, await response.clone().text()).toBe(200);
      expect(await gw().balance(tenant.account.id)).toBe(0);
    });

    it('makes a provider without a deployment key usable for the account that has its own', async () => {
      const tenant = await gw().newTenant();
      const before = await gw().post(
        '/v1/chat/completions',
        chatBody({ model: 'acme/chat-byo' }),
        tenant.inferenceKey,
      );
      expect(before.status).toBe(503);
      await addByokKey(gw(), tenant, { provider: 'byo', api_key: 'sk-byo-account' });
      const response = await gw().post(
        '/v1/chat/completions',
        chatBody({ model: 'acme/chat-byo' }),
        tenant.inferenceKey,
      );
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.gateway).toMatchObject({
        provider: 'byo',
        cost_micros: 0,
        waived: 'byok',
        saved_usd: 0.000066,
      });
      expect(gw().upstream.callsTo('byo')[0]!.headers.authorization).toBe('Bearer sk-byo-account');
    });

    it('streams with the account key: the terminal chunk carries waived byok and nothing is charged', async () => {
      const tenant = await gw().newTenant();
      await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY });
      const response = await gw().post(
        '/v1/chat/completions',
        chatBody({ stream: true }),
        tenant.inferenceKey,
      );
      expect(response.status).toBe(200);
      const chunks = dataChunks(parseSse(await response.text()));
      expect(chunks.at(-1).gateway).toMatchObject({ cost_micros: 0, waived: 'byok' });
      expect(await gw().charges(tenant.account.id)).toEqual([]);
      const record = await gw().generation(requestIdOf(response), tenant.inferenceKey);
      expect(record).toMatchObject({ byok: true, waived: 'byok', saved_micros: DEFAULT_CHAT_COST_MICROS });
    });

    it.each([
      ['/v1/embeddings', { model: 'acme/embed', input: 'hello' }, 'p1'],
      ['/v1/images/generations', { model: 'acme/image', prompt: 'a lighthouse' }, 'p1'],
      ['/v1/rerank', { model: 'acme/rerank', query: 'q', documents: ['a', 'b'] }, 'co'],
    ])('%s is served with the account key and costs nothing', async (path, request, provider) => {
      const tenant = await gw().newTenant();
      await addByokKey(gw(), tenant, { provider, api_key: `sk-own-${provider}` });
      const response = await gw().post(path, request, tenant.inferenceKey);
      const body = (await response.json()) as Json;
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.gateway).toMatchObject({ cost_micros: 0, waived: 'byok', provider });
      expect(body.gateway.saved_usd).toBeGreaterThan(0);
      expect(gw().upstream.calls[0]!.headers.authorization).toBe(`Bearer sk-own-${provider}`);
      expect(await gw().charges(tenant.account.id)).toEqual([]);
    });

    it('a key that cannot be opened (sealed under another server secret) is skipped: the paid route serves', async () => {
      const tenant = await gw().newTenant();
      await gw().storage.createByokKey({
        id: 'byok_sealedelsewhere0000',
        accountId: tenant.account.id,
        provider: 'p1',
        label: null,
        allowFallback: false,
        sealedKey: 'AAAAAAAAAAAAAAAAbm90IHNlYWxlZCBoZXJl',
      });
      const response = await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
      expect(response.status).toBe(200);
      expect(gw().upstream.calls[0]!.headers.authorization).toBe('Bearer sk-p1');
      expect(await gw().charges(tenant.account.id)).toHaveLength(1);
    });

    it('a deleted key is no longer used', async () => {
      const tenant = await gw().newTenant();
      const key = await addByokKey(gw(), tenant, { provider: 'p1', api_key: ACCOUNT_KEY });
      const deleted = await gw().gateway.fetch(
        new Request(`http://gateway.test/v1/byok/${key.id}`, {
          method: 'DELETE',
          headers: { authorization: `Bearer ${tenant.provisioningKey}` },
        }),
      );
      expect(deleted.status).toBe(200);
      await gw().post('/v1/chat/completions', chatBody(), tenant.inferenceKey);
      expect(gw().upstream.calls[0]!.headers.authorization).toBe('Bearer sk-p1');
    });
  },
  accountFeaturesConfig,
);
