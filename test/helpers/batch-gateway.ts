import type { Gateway, GatewayConfig, GatewayOptions } from '@tollgate/core';
import type { TestGateway } from '@tollgate/testing';
import { expect } from 'vitest';
import { accountFeaturesConfig } from './account-features.js';
import { describeOnEachVariant } from './gateway-under-test.js';
import {
  type InferenceGateway,
  type Json,
  startInferenceGateway,
  startKitGateway,
} from './inference-wire.js';
import type { InstantClock } from './instant-clock.js';
import { type OpenedStorage, type StorageVariant, storageVariantsWithPglite } from './storage-variants.js';

/*
 * The gateway the batches API is tested through: the in-process inference gateway of
 * `inference-wire.ts` (the testing kit's gateway on real time, scripted upstream, tenants, records
 * and ledger readers) over the account-features catalogue, with a batch worker tuned for tests
 * (short poll) and an upstream that can be held, so an item stays in flight until the test lets it
 * finish.
 */

/** The server secret every gateway of a batch suite seals under (so a sibling can open its items). */
const BATCH_SECRET = 'batch-suite-secret-0123456789abcdef-0123456789';

/** The batch worker's options (`createGateway(…, { batches })`). */
export type BatchWorkerOptions = NonNullable<GatewayOptions['batches']>;

/** The worker of a batch suite: 4 items at a time, a 20 ms poll, a 30 s lease, unless told. */
export const TEST_BATCH_WORKER: BatchWorkerOptions = { concurrency: 4, leaseMs: 30_000, pollMs: 20 };

/** How long a test waits for a batch (or an upstream call) before failing. */
const WAIT_MS = 10_000;

/** The in-process gateway with a batch worker, plus what the batch tests need. */
export interface BatchGateway extends InferenceGateway {
  opened: OpenedStorage;
  /**
   * Holds every upstream answer (the call is recorded in `upstream.calls` at once, its answer is
   * given to the gateway only on release) until the returned function is called.
   */
  holdUpstream(): () => void;
  /**
   * Another gateway on the same storage, upstream, clock and server secret, with its own worker
   * options (e.g. `concurrency: 0`: a process that takes no batch work); closed with this one.
   */
  sibling(batches: BatchWorkerOptions): Promise<Gateway>;
  /** `POST /v1/batches` with `key`; the response and its parsed body. */
  createBatch(key: string, body: unknown, gateway?: Gateway): Promise<{ response: Response; body: Json }>;
  /** `GET /v1/batches/{id}` (expects 200); the batch object. */
  getBatch(id: string, key: string): Promise<Json>;
  /** Polls `GET /v1/batches/{id}` until its status is one of `statuses` (default: a final one). */
  waitForBatch(id: string, key: string, statuses?: readonly string[]): Promise<Json>;
  /** `GET /v1/batches/{id}/results` (expects 200, NDJSON); the parsed lines. */
  results(id: string, key: string): Promise<Json[]>;
  /** Polls until `check` returns true (bounded; fails with `what`). */
  waitUntil(what: string, check: () => boolean | Promise<boolean>): Promise<void>;
}

/** A batch whose items are these chat bodies, with custom ids `item-<n>` unless given. */
export function chatBatch(bodies: Json[], extra: Record<string, unknown> = {}): Json {
  return {
    endpoint: '/v1/chat/completions',
    requests: bodies.map((body, index) => ({ custom_id: `item-${index}`, body })),
    ...extra,
  };
}

/** Starts the gateway of a batch suite on `opened`. */
export async function startBatchGateway(
  opened: OpenedStorage,
  batches: BatchWorkerOptions = {},
  config: GatewayConfig = accountFeaturesConfig,
): Promise<BatchGateway> {
  const workerOptions = (options: BatchWorkerOptions) => ({
    serverSecret: BATCH_SECRET,
    batches: { ...TEST_BATCH_WORKER, ...options },
  });
  const base = await startInferenceGateway(opened, config, workerOptions(batches));
  const { gateway, upstream } = base;
  const siblings: TestGateway<InstantClock>[] = [];
  // A batch created through another gateway on the same store (a sibling) too.
  const postBatch = (target: Gateway, key: string, body: unknown) =>
    target.fetch(
      new Request('http://gateway.test/v1/batches', {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );
  const { get } = base;

  async function waitUntil(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  async function getBatch(id: string, key: string): Promise<Json> {
    const response = await get(`/v1/batches/${encodeURIComponent(id)}`, key);
    const body = (await response.json()) as Json;
    expect(response.status, JSON.stringify(body)).toBe(200);
    return body;
  }

  return {
    ...base,
    opened,
    holdUpstream: () => upstream.hold(),
    async sibling(options) {
      const sibling = await startKitGateway(
        opened.storage,
        config,
        upstream,
        base.clock,
        workerOptions(options),
      );
      siblings.push(sibling);
      return sibling.gateway;
    },
    async createBatch(key, body, target = gateway) {
      const response = await postBatch(target, key, body);
      return { response, body: (await response.json()) as Json };
    },
    getBatch,
    async waitForBatch(id, key, statuses = ['completed', 'cancelled']) {
      let batch: Json;
      await waitUntil(`batch ${id} to be ${statuses.join(' or ')}`, async () => {
        batch = await getBatch(id, key);
        return statuses.includes(batch.status);
      });
      return batch;
    },
    async results(id, key) {
      const response = await get(`/v1/batches/${encodeURIComponent(id)}/results`, key);
      const text = await response.text();
      expect(response.status, text).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      if (text === '') return [];
      expect(text.endsWith('\n'), 'every line ends with a newline').toBe(true);
      return text
        .slice(0, -1)
        .split('\n')
        .map((line) => JSON.parse(line));
    },
    waitUntil,
    async close() {
      upstream.releaseHolds();
      for (const sibling of siblings) await sibling.close();
      await base.close();
    },
  };
}

/**
 * Declares `body` once per storage variant (SQLite, PGlite, and Postgres when `TEST_DATABASE_URL`
 * is set), each with its own batch gateway (worker options `batches`), started before the first
 * test and closed after the last; the upstream's calls and scripts and the clock are reset before
 * every test.
 */
export function describeOnEachBatchStorage(
  title: string,
  body: (gw: () => BatchGateway, variant: StorageVariant) => void,
  batches: BatchWorkerOptions = {},
): void {
  describeOnEachVariant(
    title,
    storageVariantsWithPglite,
    async (variant) => startBatchGateway(await variant.open(), batches),
    body,
    (gw) => {
      gw.upstream.reset();
      gw.clock.reset();
    },
  );
}
