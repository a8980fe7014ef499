import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayDeps } from '../../gateway-deps.js';
import { jsonResponse } from '../../http/responses.js';
import { defineRoute } from '../../http/route.js';
import { newId } from '../../ids.js';
import type { NewBatchItem } from '../../storage/batches.js';
import { batchResultsStream } from './batch-results.js';
import {
  batchListSchema,
  batchResultLineSchema,
  batchViewSchema,
  createBatchBody,
  listBatchesQuery,
} from './batch-schemas.js';
import { batchView } from './batch-view.js';
import { checkBatchItems } from './check-batch-items.js';
import { itemSealing } from './item-sealing.js';

/** Items sealed at once when a batch is created. */
const SEAL_PAGE = 200;

const notFound = (id: string) => new GatewayError('not_found', `No batch "${id}" on this account.`);

async function ownBatch(deps: GatewayDeps, accountId: string, id: string) {
  const batch = await deps.storage.getBatch(accountId, id);
  if (!batch) throw notFound(id);
  return batch;
}

/**
 * The batches API (OpenAI's shape, requests inline). Creating a batch is an inference call: an
 * inference key, one rate-limit hit for the whole batch. Reading and cancelling take any key of
 * the account and count no hit. Items run in the background (`batches/batch-worker.ts`), each a
 * metered request of its own.
 */
export const batchesRoutes = [
  defineRoute({
    method: 'POST',
    path: '/v1/batches',
    operationId: 'createBatch',
    summary: 'Create a batch of chat or embeddings requests, run in the background',
    tag: 'Batches',
    access: 'inference',
    body: createBatchBody,
    responses: { 200: { description: 'The batch, in progress', schema: batchViewSchema } },
    // A batch is not itself a metered request: a refused one has no request record.
    onRefused: async () => {},
    async handle({ body, auth, deps }) {
      await checkBatchItems(body, auth, deps);
      const accountId = auth.account.id;
      const items: NewBatchItem[] = [];
      // Sealed a page at a time: 10,000 crypto jobs at once would hold all their buffers together.
      for (let start = 0; start < body.requests.length; start += SEAL_PAGE) {
        const page = body.requests.slice(start, start + SEAL_PAGE).map(async (request, offset) => {
          const requestId = newId('req');
          return {
            index: start + offset,
            customId: request.custom_id,
            requestId,
            sealedBody: await itemSealing.sealBody(deps.batchSealer, accountId, requestId, request.body),
          };
        });
        items.push(...(await Promise.all(page)));
      }
      const batch = await deps.storage.createBatch({
        id: newId('batch'),
        accountId,
        keyId: auth.key.id,
        endpoint: body.endpoint,
        metadata: body.metadata ?? null,
        items,
        now: deps.now(),
      });
      deps.logger.info(
        { batchId: batch.id, accountId, endpoint: batch.endpoint, total: batch.total },
        'batch created',
      );
      deps.batchWorker.wake();
      return jsonResponse(batchView(batch));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/batches',
    operationId: 'listBatches',
    summary: "List the account's batches, newest first",
    tag: 'Batches',
    access: 'any',
    query: listBatchesQuery,
    responses: { 200: { description: 'A page of batches', schema: batchListSchema } },
    async handle({ query, auth, deps }) {
      const page = await deps.storage.listBatches(auth.account.id, {
        limit: query.limit,
        ...(query.after !== undefined && { after: query.after }),
      });
      return jsonResponse({
        object: 'list',
        data: page.slice(0, query.limit).map(batchView),
        has_more: page.length > query.limit,
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/batches/{id}',
    operationId: 'getBatch',
    summary: 'One batch: its status and counts',
    tag: 'Batches',
    access: 'any',
    responses: { 200: { description: 'The batch', schema: batchViewSchema } },
    async handle({ params, auth, deps }) {
      return jsonResponse(batchView(await ownBatch(deps, auth.account.id, params.id!)));
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/v1/batches/{id}/cancel',
    operationId: 'cancelBatch',
    summary: 'Cancel a batch: items not started are never run nor charged',
    tag: 'Batches',
    access: 'any',
    responses: { 200: { description: 'The batch, cancelling or cancelled', schema: batchViewSchema } },
    async handle({ params, auth, deps }) {
      const batch = await deps.storage.cancelBatch(auth.account.id, params.id!, deps.now());
      if (!batch) throw notFound(params.id!);
      deps.logger.info({ batchId: batch.id, status: batch.status }, 'batch cancel requested');
      return jsonResponse(batchView(batch));
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/batches/{id}/results',
    operationId: 'getBatchResults',
    summary: 'The results so far: one NDJSON line per finished item, in item order',
    tag: 'Batches',
    access: 'any',
    responses: {
      200: {
        description: 'application/x-ndjson, one line per finished item',
        schema: z.array(batchResultLineSchema),
      },
    },
    async handle({ params, auth, deps }) {
      const batch = await ownBatch(deps, auth.account.id, params.id!);
      return new Response(batchResultsStream(deps, batch), {
        status: 200,
        headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store' },
      });
    },
  }),
];
