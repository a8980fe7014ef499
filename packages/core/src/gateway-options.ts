import type { PublicUrl } from './admin/oauth/oauth-settings.js';
import type { JsonResponseMaker } from './http/responses.js';
import type { BatchWorkerOptions } from './operations/batches/batch-worker.js';
import type { HttpClient } from './providers/http-client.js';
import type { WalkClock } from './routing/walk-routes.js';
import type { GatewayLogger } from './telemetry/gateway-logger.js';
import type { RequestObserver } from './telemetry/request-observer.js';

/** What `createGateway` takes besides its storage and catalogue; every field has a default. */
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
