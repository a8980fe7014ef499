import type { OAuthSettings } from './admin/oauth/oauth-settings.js';
import type { DrainControl } from './admin/system/drain.js';
import type { AuthCache } from './auth/auth-cache.js';
import type { Catalogue } from './catalogue/catalogue.js';
import type { CachedAnswer } from './features/response-cache/cached-answer.js';
import type { RecentAnswers } from './features/response-cache/recent-answers.js';
import type { JsonResponder } from './http/responses.js';
import type { BodySealer } from './protections/sealed-body.js';
import type { HttpClient } from './providers/http-client.js';
import type { ProviderRegistry } from './providers/provider-registry.js';
import type { EndpointStats } from './routing/endpoint-stats.js';
import type { WalkClock } from './routing/walk-routes.js';
import type { StorageFaults } from './storage/storage-faults.js';
import type { EpochMs, Storage } from './storage/types.js';
import type { GatewayLogger } from './telemetry/gateway-logger.js';
import type { RequestObservers } from './telemetry/request-observer.js';
import type { SpanSink } from './telemetry/request-span.js';

/** What every route handler can reach. Built once per gateway. */
export interface GatewayDeps {
  storage: Storage;
  /** Recent authentications of model calls, on a storage with a change feed; else `null`. */
  authCache: AuthCache | null;
  catalogue: Catalogue;
  now: () => EpochMs;
  logger: GatewayLogger;
  defaultRateLimitRpm: number;
  /** How upstreams are reached (the providers' adapters and the features' own calls share it). */
  httpClient: HttpClient;
  /** The adapter for a provider's wire format. */
  providers: ProviderRegistry;
  /** Where request spans go; `null` without a collector. */
  spans: SpanSink | null;
  /** The host's request observer (access lines, metrics); a no-op by default. */
  observers: RequestObservers;
  /** Recent latency and speed per endpoint, for `provider.sort`. */
  endpointStats: EndpointStats;
  /** Time and chance for the routing walk. */
  clock: WalkClock;
  /** Attempts per candidate route, the first included. */
  attemptsPerRoute: number;
  /** How long a credit hold lives if the process dies before settling it. */
  reservationTtlMs: number;
  /** Largest accepted attachment (one `data:` URL or base64 part), in bytes. */
  maxAttachmentBytes: number;
  /** Lower-case hex SHA-256 of a key string (Web Crypto by default; a runtime may pass a faster one). */
  hashKey: (key: string) => string | Promise<string>;
  /** Seals stored idempotent responses and derives their lookup ids, under the server secret. */
  idempotencySealer: BodySealer;
  /** Seals the account's own provider keys (BYOK), under the server secret. */
  byokSealer: BodySealer;
  /** Seals cached answers and derives their lookup ids, under the server secret and the request. */
  responseCacheSealer: BodySealer;
  /** The response-cache answers this process kept or found last (in memory, bounded). */
  recentAnswers: RecentAnswers<CachedAnswer>;
  /** Seals batch items' bodies and answers, under the server secret, the account and the item. */
  batchSealer: BodySealer;
  /** The OAuth metadata's issuer and approve page, and how long client-credentials tokens live. */
  oauth: OAuthSettings;
  /** Requests and held calls in flight, and whether the gateway is draining (`/readyz`). */
  drain: DrainControl;
  /** Whether the latest storage write failed for a fault (`/healthz`, `/readyz`). */
  storageFaults: StorageFaults;
  /** This process's runner of batch items (woken when a batch is created here). */
  batchWorker: { wake(): void };
  /** Builds the gateway's JSON answers with the server's maker (`GatewayOptions.jsonResponse`). */
  jsonResponse: JsonResponder;
}
