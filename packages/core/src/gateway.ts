import { hashApiKey } from './auth/api-key.js';
import { cacheAuthentications } from './auth/auth-cache.js';
import { batchesRoutes } from './batches/batch-routes.js';
import { type BatchWorkerOptions, createBatchWorker, DEFAULT_BATCH_WORKER } from './batches/batch-worker.js';
import type { ServeBatchItem } from './batches/run-batch-item.js';
import type { Catalogue } from './catalogue/catalogue.js';
import { DEFAULT_MAX_ATTACHMENT_MB, DEFAULT_MAX_REQUEST_MB } from './catalogue/config-schema.js';
import { modelsRoutes } from './catalogue/models-routes.js';
import { chatCompletionsRoute } from './endpoints/chat/chat-completions-route.js';
import { embeddingsRoute } from './endpoints/embeddings/embeddings-route.js';
import { imagesRoute } from './endpoints/images/images-route.js';
import { countTokensRoute } from './endpoints/messages/count-tokens-route.js';
import { messagesRoute } from './endpoints/messages/messages-route.js';
import { rerankRoute } from './endpoints/rerank/rerank-route.js';
import { responsesRoutes } from './endpoints/responses/responses-route.js';
import { byokFeature } from './features/byok/index.js';
import { guardrailsFeature } from './features/guardrails/index.js';
import { idempotencyFeature } from './features/idempotency/index.js';
import { presetsFeature } from './features/presets/index.js';
import { responseCacheFeature } from './features/response-cache/index.js';
import { RecentAnswers } from './features/response-cache/recent-answers.js';
import { webSearchFeature } from './features/web-search/index.js';
import type { GatewayDeps } from './gateway-deps.js';
import { createRequestHandler, normalizeBasePath } from './http/handle-request.js';
import { type JsonResponseMaker, jsonResponder, plainJsonResponse } from './http/responses.js';
import type { Route } from './http/route.js';
import { MB } from './http/size-caps.js';
import { keyInfoRoute } from './keys/key-info-route.js';
import { keysRoutes } from './keys/keys-routes.js';
import { oauthRoutes } from './oauth/oauth-routes.js';
import { oauthSettings, type PublicUrl } from './oauth/oauth-settings.js';
import type { Feature } from './pipeline/feature.js';
import { useFeatures } from './pipeline/features-of.js';
import { createBodySealer } from './protections/sealed-body.js';
import { serverSecretBytes } from './protections/server-secret.js';
import { fetchHttpClient, type HttpClient } from './providers/http-client.js';
import { createProviderRegistry } from './providers/provider-registry.js';
import { generationRoute } from './records/generation-route.js';
import { generationsExportRoute } from './records/generations-export-route.js';
import { generationsListRoute } from './records/generations-list-route.js';
import { ledgerRoute } from './records/ledger-route.js';
import { usageRoute } from './records/usage-route.js';
import { EndpointStats } from './routing/endpoint-stats.js';
import { systemClock, type WalkClock } from './routing/walk-routes.js';
import { DEFAULT_STORAGE_TIMEOUT_MS, guardStorage } from './storage/guard-storage.js';
import { StorageFaults } from './storage/storage-faults.js';
import type { Storage } from './storage/types.js';
import { DrainControl, type DrainOptions, type DrainOutcome } from './system/drain.js';
import { systemRoutes } from './system/system-routes.js';
import { consoleLogger, type GatewayLogger } from './telemetry/gateway-logger.js';
import { createOtlpExporter, type OtlpExporter } from './telemetry/otlp-exporter.js';
import { type RequestObserver, RequestObservers } from './telemetry/request-observer.js';

export type { GatewayLogger } from './telemetry/gateway-logger.js';

export interface GatewayOptions {
  /** Requests per minute for accounts and keys without their own limit (config `defaults.rate_limit_rpm`). */
  defaultRateLimitRpm?: number;
  /** Largest accepted request body in bytes (default 10 MiB); larger is `413 payload_too_large`. */
  maxBodyBytes?: number;
  /**
   * Largest accepted attachment in bytes — one `data:` URL or base64 part of a message, measured on
   * its text as sent (default 5 MiB); larger is `413 payload_too_large`.
   */
  maxAttachmentBytes?: number;
  /**
   * A path prefix the gateway is mounted under, as the request URL shows it: with `'/llm'` it answers
   * `/llm/v1/...`, `/llm/healthz` and `/llm/api/openapi.json`, and any path outside `/llm` is a
   * `404 not_found`. Leave it unset when the host strips the prefix before calling `fetch` (Express's
   * `app.use('/llm', …)` rewrites `req.url`; Hono's `app.route` does not). Default: none.
   */
  basePath?: string;
  /** How upstreams are reached (default: Web `fetch`). The Node server passes a pooled undici client. */
  httpClient?: HttpClient;
  /** OTLP/HTTP trace export: one span per request to `<endpoint>/v1/traces`. */
  otlp?: { endpoint: string; timeoutMs?: number };
  /** Attempts per candidate route, the first included (default 3). */
  attemptsPerRoute?: number;
  /** How long a credit hold survives a process that died before settling it (default 15 minutes). */
  reservationTtlMs?: number;
  /**
   * Lower-case hex SHA-256, used to look keys up by hash. Default: Web Crypto (`crypto.subtle`),
   * which runs anywhere; the Node server passes `node:crypto`'s synchronous hash, several times
   * cheaper per request.
   */
  sha256Hex?: (text: string) => string | Promise<string>;
  /**
   * How long a model call may authenticate from this process's memory (default 1,000 ms; 0: never),
   * on a storage that tells of key and account changes (`AuthChangeFeed`: Postgres and SQLite). This
   * process's own changes apply at once; another process's once heard (Postgres: milliseconds),
   * else within this time (SQLite). See `AuthCache`.
   */
  authCacheMs?: number;
  /**
   * The server secret (32 bytes or more; a string counts as its UTF-8 bytes). Stored idempotent
   * responses are sealed, and looked up, under it, so the database alone reveals none of them.
   * Pass the same secret to every gateway process that shares a database, and keep it across
   * restarts. Default: a random secret made once per process and kept in memory only, so then an
   * `Idempotency-Key` neither replays after a restart nor is recognised by another process (two
   * processes would each run the request). The Node server always passes one (`TOLLGATE_SECRET`,
   * or a file beside the SQLite database).
   */
  serverSecret?: Uint8Array | string;
  /**
   * The gateway's address as its clients reach it: scheme, host, port, and the path it is mounted
   * under if any (`https://llm.example.com`, `https://example.com/llm`). It is the OAuth metadata's
   * `issuer` and the base of the endpoints it names; the request's `Host` never is. A function is
   * asked on each request (a server on port 0 knows its address once it listens). Without it,
   * `/.well-known/oauth-authorization-server` answers 404.
   */
  publicUrl?: PublicUrl;
  /** OAuth: the approve page, and how long `client_credentials` tokens live. */
  oauth?: {
    /**
     * Where an account holder approves a client (`/dashboard/authorize` on the Node server): the
     * metadata's `authorization_endpoint`, absolute or a path under `publicUrl`. Default: none, and
     * the metadata names no authorization endpoint.
     */
    approvePage?: string;
    /** Lifetime of a `client_credentials` token in seconds (config `oauth.client_credentials_ttl_s`; default 3,600). */
    clientCredentialsTtlS?: number;
  };
  /** Time and chance (default: the system clock, `Math.random`); tests inject their own. */
  clock?: WalkClock;
  logger?: GatewayLogger;
  /**
   * Told of every finished request and every failed upstream attempt (ids, names, codes, counts,
   * never content), e.g. for access-log lines and metrics. Default: none.
   */
  observer?: RequestObserver;
  /**
   * How long one storage call may take (default 5,000 ms; `--db-timeout-ms`): past it the request
   * answers `503 storage_unavailable` and nothing is sent upstream; see `guardStorage`.
   */
  storageTimeoutMs?: number;
  /**
   * The batch worker of this process (config `batches`): items run at once (default 8), how long a
   * claim lasts unless renewed (default 30 s), how often an idle worker looks for work (default 1 s).
   */
  batches?: Partial<BatchWorkerOptions>;
  /**
   * How the gateway's JSON answers are made from their bytes (default: an ordinary `Response`). The
   * Node server passes one whose body stream is made only when read, and writes its bytes directly.
   */
  jsonResponse?: JsonResponseMaker;
}

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
