import type { Catalogue } from './catalogue/catalogue.js';
import { modelsRoutes } from './catalogue/models-routes.js';
import { createRequestHandler } from './http/handle-request.js';
import type { GatewayDeps, Route } from './http/route.js';
import { keyInfoRoute } from './keys/key-info-route.js';
import { keysRoutes } from './keys/keys-routes.js';
import type { EpochMs, Storage } from './storage/types.js';
import { systemRoutes } from './system/system-routes.js';

/** A pino-compatible subset. Never pass request content to it. */
export interface GatewayLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface GatewayOptions {
  /** Requests per minute for accounts and keys without their own limit (config `defaults.rate_limit_rpm`). */
  defaultRateLimitRpm?: number;
  /** Largest accepted request body in bytes (default 20 MiB); larger is `413 payload_too_large`. */
  maxBodyBytes?: number;
  /** Clock, injectable for tests. */
  now?: () => EpochMs;
  logger?: GatewayLogger;
}

export interface Gateway {
  /** The whole service: a Web `Request` in, a Web `Response` out. */
  fetch(request: Request): Promise<Response>;
  readonly catalogue: Catalogue;
}

const VERSION = '0.1.0';

/** The `/v1` route table. Every route declares its schemas; `/api/openapi.json` is generated from it. */
export const apiRoutes: readonly Route[] = [...modelsRoutes, keyInfoRoute, ...keysRoutes];

/**
 * Composes the gateway from a storage adapter and a provider catalogue (see `buildCatalogue`).
 * A composition root only: the behaviour lives in the modules it wires.
 */
export function createGateway(storage: Storage, providers: Catalogue, options: GatewayOptions = {}): Gateway {
  const deps: GatewayDeps = {
    storage,
    catalogue: providers,
    now: options.now ?? Date.now,
    logger: options.logger ?? consoleLogger,
    defaultRateLimitRpm: options.defaultRateLimitRpm ?? 600,
  };
  const routes = [...apiRoutes, ...systemRoutes(apiRoutes, VERSION)];
  const handle = createRequestHandler(routes, deps, { maxBodyBytes: options.maxBodyBytes ?? 20 * 1024 * 1024 });
  return { catalogue: providers, fetch: handle };
}

const consoleLogger: GatewayLogger = {
  info: (obj, msg) => console.info(JSON.stringify({ level: 'info', msg, ...obj })),
  warn: (obj, msg) => console.warn(JSON.stringify({ level: 'warn', msg, ...obj })),
  error: (obj, msg) => console.error(JSON.stringify({ level: 'error', msg, ...obj })),
};
