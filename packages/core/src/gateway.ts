import type { Catalogue } from './catalogue/catalogue.js';
import type { EpochMs, Storage } from './storage/types.js';

/** A pino-compatible subset. Never pass request content to it. */
export interface GatewayLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface GatewayOptions {
  /** Requests per minute for accounts and keys without their own limit (config `defaults.rate_limit_rpm`). */
  defaultRateLimitRpm?: number;
  /** Clock, injectable for tests. */
  now?: () => EpochMs;
  logger?: GatewayLogger;
}

export interface Gateway {
  /** The whole service: a Web `Request` in, a Web `Response` out. */
  fetch(request: Request): Promise<Response>;
  readonly catalogue: Catalogue;
}

/** Composes the gateway from a storage adapter and a provider catalogue (see `buildCatalogue`). */
export function createGateway(storage: Storage, providers: Catalogue, options: GatewayOptions = {}): Gateway {
  void storage;
  void options;
  // Filled in by the HTTP layer (in progress).
  return {
    catalogue: providers,
    fetch: async () => new Response('not yet', { status: 503 }),
  };
}
