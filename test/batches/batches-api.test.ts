import { describe, expect, it } from 'vitest';
import { addPreset, chatBody, DEFAULT_CHAT_COST_MICROS } from '../helpers/account-features.js';
import { type BatchGateway, chatBatch, describeOnEachBatchStorage } from '../helpers/batch-gateway.js';
import type { Json } from '../helpers/inference-wire.js';

/*
 * The batches API (product.md "Batches (`/v1/batches`)" and "Second wave": "Rate limit and
 * batches", "Batch result lines"): creating a batch and the whole-batch validation, listing,
 * cancelling, the rate limit and account isolation. What each item leaves behind when it runs
 * (records, charges, result lines) is in `batch-items.test.ts`.
 */

const BATCH_ID = /^batch_[0-9a-z]+$/;
const REQUEST_ID = /^req_[0-9a-z]+$/;
const BATCH_FIELDS = [
  'cancelled_at',
  'completed_at',
  'created_at',
  'endpoint',
  'id',
  'in_progress_at',
  'metadata',
  'object',
  'request_counts',
  'status',
];

/** Unix seconds of now (the API's times). */
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A refusal with the error envelope: status and code, the message matching `message`. */
function expectRefusal(
  result: { response: Response; body: Json },
  status: number,
  code: string,
  message?: RegExp | string,
): void {
  const context = JSON.stringify(result.body);
  expect(result.response.status, context).toBe(status);
  expect(result.body.error, context).toMatchObject({ code, request_id: expect.stringMatching(REQUEST_ID) });
  if (message !== undefined) expect(result.body.error.message, context).toMatch(message);
}

/** The account's batches (`GET /v1/batches`), as the list object. */
async function listBatches(
  gw: BatchGateway,
  key: string,
  query = '',
): Promise<{ status: number; body: Json }> {
  const response = await gw.get(`/v1/batches${query}`, key);
  return { status: response.status, body: (await response.json()) as Json };
}

/** Creates a batch of `n` chat items and waits until it is completed; its final object. */
async function completedBatch(gw: BatchGateway, key: string, n = 1, extra: Record<string, unknown> = {}) {
  const created = await gw.createBatch(
    key,
    chatBatch(
      Array.from({ length: n }, () => chatBody()),
      extra,
    ),
  );
  expect(created.response.status, JSON.stringify(created.body)).toBe(200);
  return gw.waitForBatch(created.body.id, key);
}

describeOnEachBatchStorage('batches API', (gw) => {
  describe('POST /v1/batches', () => {
    it("200 with OpenAI's batch object: batch_ id, in_progress, counts, Unix-second times, metadata echoed", async () => {
      const tenant = await gw().newTenant();
      const before = nowSeconds();
      const { response, body } = await gw().createBatch(
        tenant.inferenceKey,
        chatBatch([chatBody(), chatBody(), chatBody()], { metadata: { project: 'alpha', run: '7' } }),
      );
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('x-gateway-request-id')).toMatch(REQUEST_ID);
      expect(Object.keys(body).sort()).toEqual(BATCH_FIELDS);
      expect(body).toEqual({
        id: expect.stringMatching(BATCH_ID),
        object: 'batch',
        endpoint: '/v1/chat/completions',
        status: 'in_progress',
        request_counts: { total: 3, completed: 0, failed: 0 },
        created_at: expect.any(Number),
        in_progress_at: body.created_at,
        completed_at: null,
        cancelled_at: null,
        metadata: { project: 'alpha', run: '7' },
      });
      expect(Number.isInteger(body.created_at)).toBe(true);
      expect(body.created_at).toBeGreaterThanOrEqual(before);
      expect(body.created_at).toBeLessThanOrEqual(nowSeconds());
      // The GET shows the same batch (and the metadata survives storage).
      const done = await gw().waitForBatch(body.id, tenant.inferenceKey);
      expect(done).toMatchObject({ id: body.id, created_at: body.created_at, metadata: body.metadata });
    });

    it('metadata defaults to null; the provisioning key may read the batch', async () => {
      const tenant = await gw().newTenant();
      const done = await completedBatch(gw(), tenant.inferenceKey);
      expect(done.metadata).toBeNull();
      const read = await gw().getBatch(done.id, tenant.provisioningKey);
      expect(read).toEqual(done);
    });

    it('a provisioning key cannot create a batch: 403 wrong_key_scope, nothing stored', async () => {
      const tenant = await gw().newTenant();
      const refused = await gw().createBatch(tenant.provisioningKey, chatBatch([chatBody()]));
      expectRefusal(refused, 403, 'wrong_key_scope');
      expect((await listBatches(gw(), tenant.inferenceKey)).body.data).toEqual([]);
    });

    it('no key → 401; GET without a key → 401', async () => {
      const response = await gw().gateway.fetch(
        new Request('http://gateway.test/v1/batches', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(chatBatch([chatBody()])),
        }),
      );
      expect(response.status).toBe(401);
      expect((await gw().get('/v1/batches', null)).status).toBe(401);
    });
  });

  describe('whole-batch validation: the first bad item refuses the batch, naming its index; nothing is stored', () => {
    const bad: [string, Json[]][] = [
      ['a body without messages', [chatBody(), chatBody(), { model: 'acme/chat' }]],
      ['a body whose messages are not an array', [chatBody(), chatBody(), chatBody({ messages: 'hi' })]],
      ['body.stream: true', [chatBody(), chatBody(), chatBody({ stream: true })]],
      ['an unknown preset', [chatBody(), chatBody(), chatBody({ model: '@preset/no-such-preset' })]],
      ['an unknown preset named beside a model', [chatBody(), chatBody(), chatBody({ preset: 'nope' })]],
    ];
    for (const [what, items] of bad) {
      it(`${what} at index 2 → 400 invalid_request naming requests[2]`, async () => {
        const tenant = await gw().newTenant();
        const refused = await gw().createBatch(tenant.inferenceKey, chatBatch(items));
        expectRefusal(refused, 400, 'invalid_request', 'requests[2]');
        expect(refused.body.error.message).not.toContain('requests[0]');
        expect((await listBatches(gw(), tenant.inferenceKey)).body).toEqual({
          object: 'list',
          data: [],
          has_more: false,
        });
        expect(gw().upstream.calls).toEqual([]);
      });
    }

    it('a duplicate custom_id → 400 naming requests[2] and the first use', async () => {
      const tenant = await gw().newTenant();
      const body = chatBatch([chatBody(), chatBody(), chatBody()]);
      body.requests[2].custom_id = body.requests[0].custom_id;
      const refused = await gw().createBatch(tenant.inferenceKey, body);
      expectRefusal(refused, 400, 'invalid_request', 'requests[2].custom_id');
      expect(refused.body.error.message).toContain('requests[0]');
      expect((await listBatches(gw(), tenant.inferenceKey)).body.data).toEqual([]);
    });

    it('valid items pass: a preset supplying the model is resolved when validating; stream: false is allowed', async () => {
      const tenant = await gw().newTenant();
      await addPreset(gw(), tenant, { name: 'house', config: { model: 'acme/chat' } });
      const items = [
        chatBody({ stream: false }),
        { preset: 'house', messages: [{ role: 'user', content: 'hi' }] },
        { model: '@preset/house', messages: [{ role: 'user', content: 'hi' }] },
      ];
      const created = await gw().createBatch(tenant.inferenceKey, chatBatch(items));
      expect(created.response.status, JSON.stringify(created.body)).toBe(200);
      const done = await gw().waitForBatch(created.body.id, tenant.inferenceKey);
      expect(done.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
      const lines = await gw().results(done.id, tenant.inferenceKey);
      expect((await gw().generation(lines[2].id, tenant.inferenceKey)).preset).toBe('house');
    });

    it('an embeddings item validated as embeddings: a chat body in an embeddings batch names its index', async () => {
      const tenant = await gw().newTenant();
      const refused = await gw().createBatch(tenant.inferenceKey, {
        endpoint: '/v1/embeddings',
        requests: [
          { custom_id: 'a', body: { model: 'acme/embed', input: 'one' } },
          { custom_id: 'b', body: chatBody() },
        ],
      });
      expectRefusal(refused, 400, 'invalid_request', 'requests[1]');
      expect((await listBatches(gw(), tenant.inferenceKey)).body.data).toEqual([]);
    });

    const shapes: [string, Json, RegExp][] = [
      ['0 requests', { endpoint: '/v1/chat/completions', requests: [] }, /requests/],
      [
        '10,001 requests',
        chatBatch(Array.from({ length: 10_001 }, () => chatBody())),
        /requests.*(10,?000|at most)/,
      ],
      [
        'an endpoint other than chat completions or embeddings',
        { ...chatBatch([chatBody()]), endpoint: '/v1/images/generations' },
        /endpoint/,
      ],
      ['no endpoint', { requests: chatBatch([chatBody()]).requests }, /endpoint/],
      [
        'an item without custom_id',
        { endpoint: '/v1/chat/completions', requests: [{ body: chatBody() }] },
        /custom_id/,
      ],
      [
        'an empty custom_id',
        { endpoint: '/v1/chat/completions', requests: [{ custom_id: '', body: chatBody() }] },
        /custom_id/,
      ],
      ['metadata with a non-string value', { ...chatBatch([chatBody()]), metadata: { n: 1 } }, /metadata/],
    ];
    for (const [what, body, message] of shapes) {
      it(`${what} → 400 invalid_request, nothing stored`, async () => {
        const tenant = await gw().newTenant();
        const refused = await gw().createBatch(tenant.inferenceKey, body);
        expectRefusal(refused, 400, 'invalid_request', message);
        expect((await listBatches(gw(), tenant.inferenceKey)).body.data).toEqual([]);
        expect(gw().upstream.calls).toEqual([]);
      });
    }
  });

  describe('GET /v1/batches: newest first, limit, after, has_more', () => {
    it('pages through the batches newest first', async () => {
      const tenant = await gw().newTenant();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        // One second apart, so "newest first" does not rest on the id tie-break.
        gw().clock.offsetMs = i * 1_000;
        ids.push((await completedBatch(gw(), tenant.inferenceKey, 1, { metadata: { n: String(i) } })).id);
      }
      const [first, second, third] = ids;
      const all = await listBatches(gw(), tenant.inferenceKey);
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', has_more: false });
      expect(all.body.data.map((b: Json) => b.id)).toEqual([third, second, first]);
      expect(all.body.data[0]).toEqual(await gw().getBatch(third!, tenant.inferenceKey));

      const page1 = await listBatches(gw(), tenant.inferenceKey, '?limit=2');
      expect(page1.body.data.map((b: Json) => b.id)).toEqual([third, second]);
      expect(page1.body.has_more).toBe(true);
      const page2 = await listBatches(gw(), tenant.inferenceKey, `?limit=2&after=${second}`);
      expect(page2.body.data.map((b: Json) => b.id)).toEqual([first]);
      expect(page2.body.has_more).toBe(false);
      const exact = await listBatches(gw(), tenant.inferenceKey, '?limit=3');
      expect(exact.body.has_more).toBe(false);
      const afterLast = await listBatches(gw(), tenant.inferenceKey, `?after=${first}`);
      expect(afterLast.body).toEqual({ object: 'list', data: [], has_more: false });
      const max = await listBatches(gw(), tenant.provisioningKey, '?limit=100');
      expect(max.status).toBe(200);
      expect(max.body.data).toHaveLength(3);
    });

    it('batches created in the same millisecond page through without loss or repeat', async () => {
      const tenant = await gw().newTenant();
      gw().clock.frozenAt = Date.now();
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await completedBatch(gw(), tenant.inferenceKey)).id);
      const seen: string[] = [];
      let query = '?limit=1';
      for (let page = 0; page < 10; page++) {
        const { body } = await listBatches(gw(), tenant.inferenceKey, query);
        expect(body.data).toHaveLength(1);
        seen.push(body.data[0].id);
        if (!body.has_more) break;
        query = `?limit=1&after=${body.data[0].id}`;
      }
      expect(seen).toHaveLength(4);
      expect([...seen].sort()).toEqual([...ids].sort());
      const all = await listBatches(gw(), tenant.inferenceKey);
      expect(all.body.data.map((b: Json) => b.id)).toEqual(seen);
    });

    for (const query of ['?limit=0', '?limit=101', '?limit=-1', '?limit=two', '?limit=1.5', '?colour=red']) {
      it(`${query} → 400 invalid_request`, async () => {
        const tenant = await gw().newTenant();
        const { status, body } = await listBatches(gw(), tenant.inferenceKey, query);
        expect(status, JSON.stringify(body)).toBe(400);
        expect(body.error.code).toBe('invalid_request');
      });
    }
  });

  describe('isolation: another account sees none of it', () => {
    it("another account's batch id → 404 not_found on GET, cancel and results; its list does not show it", async () => {
      const owner = await gw().newTenant();
      const other = await gw().newTenant();
      const release = gw().holdUpstream();
      let id: string;
      try {
        const created = await gw().createBatch(owner.inferenceKey, chatBatch([chatBody(), chatBody()]));
        expect(created.response.status).toBe(200);
        id = created.body.id;
        for (const key of [other.inferenceKey, other.provisioningKey]) {
          const get = await gw().get(`/v1/batches/${id}`, key);
          expect(get.status).toBe(404);
          expect(((await get.json()) as Json).error.code).toBe('not_found');
          const results = await gw().get(`/v1/batches/${id}/results`, key);
          expect(results.status).toBe(404);
          expect(((await results.json()) as Json).error.code).toBe('not_found');
          const cancel = await gw().post(`/v1/batches/${id}/cancel`, '', key);
          expect(cancel.status).toBe(404);
          expect(((await cancel.json()) as Json).error.code).toBe('not_found');
        }
        expect((await listBatches(gw(), other.inferenceKey)).body.data).toEqual([]);
        // Paging after another account's id shows nothing of either account.
        expect((await listBatches(gw(), other.inferenceKey, `?after=${id}`)).body.data).toEqual([]);
      } finally {
        release();
      }
      // The other account's cancel did nothing: the owner's batch runs to the end.
      const done = await gw().waitForBatch(id, owner.inferenceKey);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    });

    it('an unknown id → 404 not_found on GET, cancel and results', async () => {
      const tenant = await gw().newTenant();
      for (const path of ['/v1/batches/batch_doesnotexist', '/v1/batches/batch_doesnotexist/results']) {
        const response = await gw().get(path, tenant.inferenceKey);
        expect(response.status).toBe(404);
        expect(((await response.json()) as Json).error.code).toBe('not_found');
      }
      const cancel = await gw().post('/v1/batches/batch_doesnotexist/cancel', '', tenant.inferenceKey);
      expect(cancel.status).toBe(404);
      expect(((await cancel.json()) as Json).error.code).toBe('not_found');
    });
  });

  describe('rate limit: POST /v1/batches counts one rpm hit; its items, GETs and cancel count none', () => {
    it('with rpm 2, a 50-item batch runs every item; a second POST passes and a third is 429', async () => {
      // Half way through a clock minute, so the hits never straddle two counting windows.
      gw().clock.frozenAt = Math.floor(Date.now() / 60_000) * 60_000 + 30_000;
      const tenant = await gw().newTenant(10_000_000, { defaultRpm: 2 });
      const key = tenant.inferenceKey;
      const done = await completedBatch(gw(), key, 50);
      expect(done.request_counts).toEqual({ total: 50, completed: 50, failed: 0 });
      expect(gw().upstream.calls).toHaveLength(50);
      expect(await gw().charges(tenant.account.id)).toHaveLength(50);
      expect(await gw().balance(tenant.account.id)).toBe(
        tenant.account.balanceMicros - 50 * DEFAULT_CHAT_COST_MICROS,
      );

      // Reads and a cancel, many times over the limit: none of them counts.
      for (let i = 0; i < 3; i++) {
        expect((await gw().get(`/v1/batches/${done.id}`, key)).status).toBe(200);
        expect((await gw().get('/v1/batches', key)).status).toBe(200);
        expect((await gw().get(`/v1/batches/${done.id}/results`, key)).status).toBe(200);
        expect((await gw().post(`/v1/batches/${done.id}/cancel`, '', key)).status).toBe(200);
      }

      const second = await gw().createBatch(key, chatBatch([chatBody()]));
      expect(second.response.status, JSON.stringify(second.body)).toBe(200);
      const third = await gw().createBatch(key, chatBatch([chatBody()]));
      expectRefusal(third, 429, 'rate_limited');
      expect(third.response.headers.get('retry-after')).toMatch(/^\d+$/);
      await gw().waitForBatch(second.body.id, key);
      expect((await listBatches(gw(), key)).body.data).toHaveLength(2);
    });
  });
});

describeOnEachBatchStorage(
  'batches API, cancel (one item at a time)',
  (gw) => {
    it('cancel mid-batch: cancelling then cancelled with exact counts; untouched items never run nor charged', async () => {
      const tenant = await gw().newTenant();
      const key = tenant.inferenceKey;
      const release = gw().holdUpstream();
      let id: string;
      try {
        const created = await gw().createBatch(
          key,
          chatBatch([chatBody(), chatBody(), chatBody(), chatBody()]),
        );
        expect(created.response.status).toBe(200);
        id = created.body.id;
        // The first item is in flight (its upstream call made, its answer held).
        await gw().waitUntil('the first item to reach the upstream', () => gw().upstream.calls.length === 1);

        const cancel = await gw().post(`/v1/batches/${id}/cancel`, '', key);
        const cancelling = (await cancel.json()) as Json;
        expect(cancel.status, JSON.stringify(cancelling)).toBe(200);
        expect(cancelling).toMatchObject({
          id,
          status: 'cancelling',
          request_counts: { total: 4, completed: 0, failed: 0 },
          completed_at: null,
          cancelled_at: null,
        });
        expect((await gw().getBatch(id, key)).status).toBe('cancelling');
        // A second cancel while cancelling returns the batch as it is.
        const again = await gw().post(`/v1/batches/${id}/cancel`, '', key);
        expect(((await again.json()) as Json).status).toBe('cancelling');
        // Results so far: one line per finished item, i.e. the three cancelled ones, in order.
        const sofar = await gw().results(id, key);
        expect(sofar.map((line) => line.custom_id)).toEqual(['item-1', 'item-2', 'item-3']);
      } finally {
        release();
      }

      const done = await gw().waitForBatch(id, key);
      expect(done).toMatchObject({
        status: 'cancelled',
        request_counts: { total: 4, completed: 1, failed: 0 },
        completed_at: null,
      });
      expect(done.cancelled_at).toEqual(expect.any(Number));
      expect(done.cancelled_at).toBeGreaterThanOrEqual(done.created_at);
      expect(gw().upstream.calls).toHaveLength(1);

      const lines = await gw().results(id, key);
      expect(lines.map((line) => line.custom_id)).toEqual(['item-0', 'item-1', 'item-2', 'item-3']);
      const [ran, ...untouched] = lines;
      expect(ran).toMatchObject({ id: expect.stringMatching(REQUEST_ID), error: null });
      expect(ran.response).toMatchObject({ status_code: 200, request_id: ran.id });
      for (const line of untouched) {
        expect(line).toEqual({
          id: expect.stringMatching(REQUEST_ID),
          custom_id: line.custom_id,
          response: null,
          error: { code: 'batch_cancelled', message: expect.any(String) },
        });
        // Never run: no record, no charge.
        const record = await gw().get(`/v1/generation?id=${line.id}`, key);
        expect(record.status).toBe(404);
      }
      // The item in flight finished and was charged, alone.
      const charges = await gw().charges(tenant.account.id);
      expect(charges).toMatchObject([{ requestId: ran.id, amountMicros: -DEFAULT_CHAT_COST_MICROS }]);
      expect(await gw().balance(tenant.account.id)).toBe(
        tenant.account.balanceMicros - DEFAULT_CHAT_COST_MICROS,
      );
      expect((await gw().generation(ran.id, key)).cost_micros).toBe(DEFAULT_CHAT_COST_MICROS);

      // Cancelling a cancelled batch returns it unchanged.
      const after = await gw().post(`/v1/batches/${id}/cancel`, '', key);
      expect(after.status).toBe(200);
      expect(await after.json()).toEqual(done);
    });

    it('cancel of a completed batch returns it unchanged', async () => {
      const tenant = await gw().newTenant();
      const created = await gw().createBatch(tenant.inferenceKey, chatBatch([chatBody(), chatBody()]));
      const done = await gw().waitForBatch(created.body.id, tenant.inferenceKey);
      expect(done.status).toBe('completed');
      expect(done.completed_at).toEqual(expect.any(Number));
      const cancel = await gw().post(`/v1/batches/${done.id}/cancel`, '', tenant.provisioningKey);
      expect(cancel.status).toBe(200);
      expect(await cancel.json()).toEqual(done);
      expect(await gw().getBatch(done.id, tenant.inferenceKey)).toEqual(done);
      expect((await gw().results(done.id, tenant.inferenceKey)).every((l) => l.error === null)).toBe(true);
    });

    it('cancel before any item started: cancelled at once, every line batch_cancelled, nothing charged', async () => {
      const tenant = await gw().newTenant();
      const key = tenant.inferenceKey;
      // Another batch holds the only slot, so the second batch's items all wait in the queue.
      const other = await gw().newTenant();
      const release = gw().holdUpstream();
      let blocker: string;
      let id: string;
      try {
        blocker = (await gw().createBatch(other.inferenceKey, chatBatch([chatBody()]))).body.id;
        await gw().waitUntil(
          'the blocking item to reach the upstream',
          () => gw().upstream.calls.length === 1,
        );
        const created = await gw().createBatch(key, chatBatch([chatBody(), chatBody(), chatBody()]));
        id = created.body.id;
        const cancel = await gw().post(`/v1/batches/${id}/cancel`, '', key);
        const cancelled = (await cancel.json()) as Json;
        expect(cancel.status).toBe(200);
        expect(cancelled).toMatchObject({
          status: 'cancelled',
          request_counts: { total: 3, completed: 0, failed: 0 },
          cancelled_at: expect.any(Number),
          completed_at: null,
        });
      } finally {
        release();
      }
      await gw().waitForBatch(blocker, other.inferenceKey);
      const lines = await gw().results(id, key);
      expect(lines.map((l) => [l.custom_id, l.response, l.error?.code])).toEqual([
        ['item-0', null, 'batch_cancelled'],
        ['item-1', null, 'batch_cancelled'],
        ['item-2', null, 'batch_cancelled'],
      ]);
      expect(await gw().charges(tenant.account.id)).toEqual([]);
      expect(gw().upstream.calls).toHaveLength(1);
      expect((await gw().getBatch(id, key)).status).toBe('cancelled');
    });
  },
  { concurrency: 1 },
);
