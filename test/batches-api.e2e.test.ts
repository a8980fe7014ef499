import type { Storage } from '@tollgate/core';
import { createServerTelemetry } from '@tollgate/node-server';
import { expect, it } from 'vitest';
import { chatConfig, UPSTREAM } from './helpers/chat-gateway.js';
import { jsonReply } from './helpers/chat-wire.js';
import { call } from './helpers/http.js';
import { openAiCompletion } from './helpers/records-wire.js';
import { describeOnEachVariant, silentLogger, startE2eGateway } from './helpers/start-e2e-gateway.js';

/*
 * The batches API through the real Node server (product.md "Batches (`/v1/batches`)"): a batch
 * created over HTTP runs in the background against a mock upstream, its results are read as
 * NDJSON, the official SDK reads and lists it, and `/metrics` counts its items by state (wired as
 * `tollgate serve` wires it: `createServerTelemetry({ batchItems: () => storage.countBatchItems() })`).
 */

// acme/gpt: 0.11 / 0.44 USD per M tokens, so 1000 prompt and 100 completion tokens cost 110 + 44 micros.
const ITEM_COST_MICROS = 154;

describeOnEachVariant(
  'batches API through the Node server',
  async (variant) => {
    let storage: Storage | undefined;
    const telemetry = createServerTelemetry({
      logger: silentLogger,
      processMetrics: false,
      batchItems: () => storage!.countBatchItems(),
    });
    return startE2eGateway({
      config: chatConfig,
      open: async () => {
        const opened = await variant.open();
        storage = opened.storage;
        return opened;
      },
      gateway: { observer: telemetry.observer, attemptsPerRoute: 1, batches: { pollMs: 20 } },
      server: { metrics: telemetry.metricsEndpoint },
    });
  },
  (gw) => {
    it('a batch created over HTTP completes; its NDJSON results, records, charges and /metrics agree', async () => {
      const { url, mock } = gw();
      mock.setDefault(
        UPSTREAM.openai,
        jsonReply(openAiCompletion({ text: 'Hi!', usage: { prompt: 1000, completion: 100 } })),
      );
      const tenant = await gw().newTenant();
      const key = tenant.inferenceKey;
      const created = await call(url, '/v1/batches', {
        key,
        json: {
          endpoint: '/v1/chat/completions',
          requests: ['first', 'second', 'third'].map((custom_id) => ({
            custom_id,
            body: { model: 'acme/gpt', messages: [{ role: 'user', content: `Hello ${custom_id}` }] },
          })),
          metadata: { job: 'e2e' },
        },
      });
      expect(created.status, created.text).toBe(200);
      expect(created.body).toMatchObject({
        id: expect.stringMatching(/^batch_/),
        object: 'batch',
        status: 'in_progress',
        request_counts: { total: 3, completed: 0, failed: 0 },
        metadata: { job: 'e2e' },
      });
      const id: string = created.body.id;

      // Bounded wait for the background worker (polling the batch, never a fixed sleep).
      let batch = created.body;
      const deadline = Date.now() + 10_000;
      while (batch.status !== 'completed') {
        expect(Date.now(), `batch still ${batch.status}`).toBeLessThan(deadline);
        await new Promise((resolve) => setTimeout(resolve, 20));
        batch = (await call(url, `/v1/batches/${id}`, { key })).body;
      }
      expect(batch.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
      expect(batch.completed_at).toEqual(expect.any(Number));

      const results = await fetch(`${url}/v1/batches/${id}/results`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(results.status).toBe(200);
      expect(results.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      const text = await results.text();
      const lines = text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => line.custom_id)).toEqual(['first', 'second', 'third']);
      for (const line of lines) {
        expect(line).toMatchObject({
          id: expect.stringMatching(/^req_/),
          response: { status_code: 200, request_id: line.id },
          error: null,
        });
        expect(line.response.body).toMatchObject({
          object: 'chat.completion',
          choices: [{ message: { content: 'Hi!' } }],
          gateway: { request_id: line.id, cost_micros: ITEM_COST_MICROS },
        });
        const record = await call(url, `/v1/generation?id=${line.id}`, { key });
        expect(record.status, record.text).toBe(200);
        expect(record.body.data).toMatchObject({
          id: line.id,
          status: 'success',
          cost_micros: ITEM_COST_MICROS,
        });
      }
      expect(mock.received.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(3);
      const account = await gw().storage.getAccount(tenant.account.id);
      expect(account!.balanceMicros).toBe(tenant.account.balanceMicros - 3 * ITEM_COST_MICROS);

      // The official SDK reads, lists and cancels it (OpenAI's batch object and list shape).
      const client = gw().client(key);
      const read = await client.batches.retrieve(id);
      expect(read).toMatchObject({ id, object: 'batch', status: 'completed', request_counts: { total: 3 } });
      const page = await client.batches.list({ limit: 10 });
      expect(page.data.map((b) => b.id)).toEqual([id]);
      const cancelled = await client.batches.cancel(id);
      expect(cancelled.status).toBe('completed');

      const metrics = await fetch(`${url}/metrics`);
      expect(metrics.status).toBe(200);
      const scraped = (await metrics.text()).split('\n');
      expect(scraped).toContain('tollgate_batch_items{state="completed"} 3');
      for (const state of ['queued', 'running', 'failed', 'cancelled']) {
        expect(scraped).toContain(`tollgate_batch_items{state="${state}"} 0`);
      }
    });

    it('GET /v1/batches/{id} of another account over HTTP → 404 not_found', async () => {
      const owner = await gw().newTenant();
      const other = await gw().newTenant();
      gw().mock.setDefault(
        UPSTREAM.openai,
        jsonReply(openAiCompletion({ text: 'x', usage: { prompt: 1, completion: 1 } })),
      );
      const created = await call(gw().url, '/v1/batches', {
        key: owner.inferenceKey,
        json: {
          endpoint: '/v1/chat/completions',
          requests: [
            { custom_id: 'a', body: { model: 'acme/gpt', messages: [{ role: 'user', content: 'hi' }] } },
          ],
        },
      });
      expect(created.status, created.text).toBe(200);
      const response = await call(gw().url, `/v1/batches/${created.body.id}`, { key: other.inferenceKey });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });
  },
  (gw) => gw.mock.reset(),
);
