import type { z } from 'zod';
import type { AuthContext } from '../auth/authenticate.js';
import type { Catalogue } from '../catalogue/catalogue.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { GatewayLogger } from '../gateway.js';
import type { BodySealer } from '../protections/sealed-body.js';
import type { ProviderRegistry } from '../providers/provider-registry.js';
import type { SpanSink } from '../records/request-log.js';
import type { EndpointStats } from '../routing/endpoint-stats.js';
import type { WalkClock } from '../routing/walk-routes.js';
import type { EpochMs, Storage } from '../storage/types.js';
import type { RequestObservers } from '../telemetry/request-observer.js';

/** Who may call a route: nobody needs a key, any key, or a key of one scope. */
export type RouteAccess = 'public' | 'any' | 'inference' | 'provisioning';

/** What every route handler can reach. Built once per gateway. */
export interface GatewayDeps {
  storage: Storage;
  catalogue: Catalogue;
  now: () => EpochMs;
  logger: GatewayLogger;
  defaultRateLimitRpm: number;
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
}

/** What an `onRefused` hook knows: the request got past authentication but not into its handler. */
export interface RefusalContext {
  request: Request;
  requestId: string;
  auth: AuthContext;
  deps: GatewayDeps;
  /** The parsed body, when it got that far. */
  body: unknown;
}

export interface RouteContext<Body, Query, Access extends RouteAccess> {
  request: Request;
  requestId: string;
  params: Record<string, string>;
  body: Body;
  query: Query;
  /** The authenticated key and account; absent on public routes. */
  auth: Access extends 'public' ? undefined : AuthContext;
  deps: GatewayDeps;
}

export interface RouteResponseSpec {
  description: string;
  schema?: z.ZodType;
}

/**
 * One entry of the route table. Its schemas validate requests at run time and are the source of
 * `/api/openapi.json`, so the document cannot drift from the code.
 */
export interface Route<
  BodySchema extends z.ZodType | undefined = z.ZodType | undefined,
  QuerySchema extends z.ZodType | undefined = z.ZodType | undefined,
  Access extends RouteAccess = RouteAccess,
> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path template with `{param}` segments, e.g. `/v1/keys/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  access: Access;
  body?: BodySchema;
  query?: QuerySchema;
  responses: Record<number, RouteResponseSpec>;
  handle(
    ctx: RouteContext<
      BodySchema extends z.ZodType ? z.output<BodySchema> : undefined,
      QuerySchema extends z.ZodType ? z.output<QuerySchema> : undefined,
      Access
    >,
  ): Promise<Response> | Response;
  /**
   * Called when an authenticated request is refused before the handler runs (rate limit, body
   * validation), so an inference route can record the refusal.
   */
  onRefused?(ctx: RefusalContext, error: GatewayError): Promise<void>;
}

/** Declares a route with its types inferred from its schemas. */
export function defineRoute<
  BodySchema extends z.ZodType | undefined = undefined,
  QuerySchema extends z.ZodType | undefined = undefined,
  Access extends RouteAccess = RouteAccess,
>(route: Route<BodySchema, QuerySchema, Access>): Route {
  return route as unknown as Route;
}
