import { keyInfoRoute } from './admin/keys/key-info-route.js';
import { keysRoutes } from './admin/keys/keys-routes.js';
import { oauthRoutes } from './admin/oauth/oauth-routes.js';
import { oauthSettings } from './admin/oauth/oauth-settings.js';
import { generationRoute } from './admin/records/generation-route.js';
import { generationsExportRoute } from './admin/records/generations-export-route.js';
import { generationsListRoute } from './admin/records/generations-list-route.js';
import { ledgerRoute } from './admin/records/ledger-route.js';
import { usageRoute } from './admin/records/usage-route.js';
import { DrainControl, type DrainOptions, type DrainOutcome } from './admin/system/drain.js';
import { systemRoutes } from './admin/system/system-routes.js';
import { hashApiKey } from './auth/api-key.js';
import { cacheAuthentications } from './auth/auth-cache.js';
import type { Catalogue } from './catalogue/catalogue.js';
import { DEFAULT_MAX_ATTACHMENT_MB, DEFAULT_MAX_REQUEST_MB } from './catalogue/config-schema.js';
import { modelsRoutes } from './catalogue/models-routes.js';
import { byokFeature } from './features/byok/index.js';
import { guardrailsFeature } from './features/guardrails/index.js';
import { idempotencyFeature } from './features/idempotency/index.js';
import { presetsFeature } from './features/presets/index.js';
import { responseCacheFeature } from './features/response-cache/index.js';
import { RecentAnswers } from './features/response-cache/recent-answers.js';
import { webSearchFeature } from './features/web-search/index.js';
import type { GatewayDeps } from './gateway-deps.js';
import type { GatewayOptions } from './gateway-options.js';
import { createRequestHandler, normalizeBasePath } from './http/handle-request.js';
import { jsonResponder, plainJsonResponse } from './http/responses.js';
import type { Route } from './http/route.js';
import { MB } from './http/size-caps.js';
import { batchesRoutes } from './operations/batches/batch-routes.js';
import { createBatchWorker, DEFAULT_BATCH_WORKER } from './operations/batches/batch-worker.js';
import type { ServeBatchItem } from './operations/batches/run-batch-item.js';
import { chatCompletionsRoute } from './operations/chat/chat-completions-route.js';
import { embeddingsRoute } from './operations/embeddings/embeddings-route.js';
import { imagesRoute } from './operations/images/images-route.js';
import { countTokensRoute } from './operations/messages/count-tokens-route.js';
import { messagesRoute } from './operations/messages/messages-route.js';
import { rerankRoute } from './operations/rerank/rerank-route.js';
import { responsesRoutes } from './operations/responses/responses-route.js';
import type { Feature } from './pipeline/feature.js';
import { useFeatures } from './pipeline/features-of.js';
import { createBodySealer } from './protections/sealed-body.js';
import { serverSecretBytes } from './protections/server-secret.js';
import { fetchHttpClient } from './providers/http-client.js';
import { createProviderRegistry } from './providers/provider-registry.js';
import { EndpointStats } from './routing/endpoint-stats.js';
import { systemClock } from './routing/walk-routes.js';
import { DEFAULT_STORAGE_TIMEOUT_MS, guardStorage } from './storage/guard-storage.js';
import { StorageFaults } from './storage/storage-faults.js';
import type { Storage } from './storage/types.js';
import { consoleLogger } from './telemetry/gateway-logger.js';
import { createOtlpExporter, type OtlpExporter } from './telemetry/otlp-exporter.js';
import { RequestObservers } from './telemetry/request-observer.js';

export type { GatewayOptions } from './gateway-options.js';
export type { GatewayLogger } from './telemetry/gateway-logger.js';

export interface Gateway {
  /** The whole service: a Web `Request` in, a Web `Response` out. */
  fetch(request: Request): Promise<Response>;
  readonly catalogue: Catalogue;
  /**
   * Starts this process's batch worker now. Without it the worker starts with the first batch
   * created through this gateway; a server calls it at start so batches of a stopped process (and
   * of other processes on the same database) run here too.
   */
  startBatches(): void;
  /**
   * Drains before a shutdown: `/readyz` answers `503 {"status": "draining"}` from now on (requests
   * are still served) and no new batch item is claimed. Resolves once nothing is in flight after
   * `accepting` settled, or at the end of `graceMs` after cutting what is left: each held call
   * settles as it ends (a stream as a broken stream charged for what it delivered). Then `close()`.
   */
  drain(options?: DrainOptions): Promise<DrainOutcome>;
  /** Stops the batch worker (items in flight finish) and flushes pending trace export. Call it when shutting down. */
  close(): Promise<void>;
}

const VERSION = '0.1.0';

/**
 * The account features: each a folder under `features/` with its routes and its hooks at the
 * metered call's stages (`pipeline/feature.ts`). A new feature is a folder and a line here.
 */
const FEATURES: readonly Feature[] = [
  byokFeature,
  presetsFeature,
  guardrailsFeature,
  responseCacheFeature,
  idempotencyFeature,
  webSearchFeature,
];

/** The `/v1` route table. Every route declares its schemas; `/api/openapi.json` is generated from it. */
export const apiRoutes: readonly Route[] = [
  chatCompletionsRoute,
  messagesRoute,
  countTokensRoute,
  embeddingsRoute,
  imagesRoute,
  rerankRoute,
  ...responsesRoutes,
  generationsExportRoute,
  generationRoute,
  generationsListRoute,
  usageRoute,
  ledgerRoute,
  ...modelsRoutes,
  keyInfoRoute,
  ...keysRoutes,
  ...FEATURES.flatMap((feature) => feature.routes ?? []),
  ...batchesRoutes,
  ...oauthRoutes,
];

/**
 * Composes the gateway from a storage adapter and a provider catalogue (see `buildCatalogue`).
 * A composition root only: the behaviour lives in the modules it wires.
 */
export function createGateway(storage: Storage, providers: Catalogue, options: GatewayOptions = {}): Gateway {
  const logger = options.logger ?? consoleLogger;
  const clock = options.clock ?? systemClock;
  const now = () => clock.now();
  const exporter: OtlpExporter | null = options.otlp
    ? createOtlpExporter({
        endpoint: options.otlp.endpoint,
        timeoutMs: options.otlp.timeoutMs,
        http: options.httpClient,
        logger,
        serviceName: 'tollgate',
        serviceVersion: VERSION,
      })
    : null;
  const secret = serverSecretBytes(options.serverSecret);
  const httpClient = options.httpClient ?? fetchHttpClient();
  const basePath = normalizeBasePath(options.basePath);
  let handle: ReturnType<typeof createRequestHandler> | undefined;
  const serveBatchItem: ServeBatchItem = (endpoint, body, as) =>
    handle!(
      new Request(`http://tollgate.internal${basePath}${endpoint}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      }),
      as,
    );
  const storageFaults = new StorageFaults(logger);
  const guarded = guardStorage(storage, {
    timeoutMs: options.storageTimeoutMs ?? DEFAULT_STORAGE_TIMEOUT_MS,
    clock,
    faults: storageFaults,
  });
  const drain = new DrainControl(clock);
  const auth = cacheAuthentications(guarded, options.authCacheMs, logger);
  const shared: Omit<GatewayDeps, 'batchWorker'> = {
    storage: guarded,
    drain,
    storageFaults,
    authCache: auth.cache,
    catalogue: providers,
    now,
    logger,
    defaultRateLimitRpm: options.defaultRateLimitRpm ?? 600,
    httpClient,
    providers: createProviderRegistry(httpClient, now),
    spans: exporter,
    observers: new RequestObservers(options.observer ?? {}, logger),
    endpointStats: new EndpointStats(),
    clock,
    attemptsPerRoute: options.attemptsPerRoute ?? 3,
    reservationTtlMs: options.reservationTtlMs ?? 15 * 60_000,
    maxAttachmentBytes: options.maxAttachmentBytes ?? DEFAULT_MAX_ATTACHMENT_MB * MB,
    hashKey: options.sha256Hex ?? hashApiKey,
    idempotencySealer: createBodySealer(secret, 'idempotency'),
    byokSealer: createBodySealer(secret, 'byok'),
    responseCacheSealer: createBodySealer(secret, 'response-cache'),
    recentAnswers: new RecentAnswers(),
    batchSealer: createBodySealer(secret, 'batch'),
    oauth: oauthSettings(options.publicUrl, options.oauth),
    jsonResponse: jsonResponder(options.jsonResponse ?? plainJsonResponse),
  };
  const batchWorker = createBatchWorker(shared, serveBatchItem, {
    ...DEFAULT_BATCH_WORKER,
    ...options.batches,
  });
  const deps: GatewayDeps = { ...shared, batchWorker };
  useFeatures(deps, FEATURES);
  const routes = [...apiRoutes, ...systemRoutes(apiRoutes, VERSION, basePath)];
  handle = createRequestHandler(routes, deps, {
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_REQUEST_MB * MB,
    basePath,
  });
  return {
    catalogue: providers,
    // Only the request: the handler's second parameter is the gateway's own (batch items).
    fetch: async (request) => {
      drain.requestStarted();
      try {
        return await handle!(request);
      } finally {
        drain.requestEnded();
      }
    },
    startBatches: () => batchWorker.wake(),
    drain: (drainOptions) => {
      batchWorker.close().catch(() => {});
      return drain.drain(drainOptions);
    },
    close: async () => {
      await batchWorker.close();
      await exporter?.shutdown();
      await auth.close();
    },
  };
}
