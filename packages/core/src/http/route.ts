import type { z } from 'zod';
import type { AuthContext } from '../auth/authenticate.js';
import type { GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { DeferredRateLimit } from '../protections/rate-limit.js';
import type { RouteAccess } from './route-access.js';

export type { GatewayDeps, RouteAccess };

/** Whom bodies are resolved for, and what the bodies resolved together share. */
export interface ResolveScope {
  auth: AuthContext;
  deps: GatewayDeps;
  /**
   * Set when many bodies are resolved together (a new batch's items): a read under the same `key`
   * is made once for all of them, so a batch naming one preset a thousand times reads it once.
   */
  readOnce?: ReadOnce;
}

/** Runs `read` the first time `key` is asked for; later asks get the same promise. */
export type ReadOnce = <T>(key: string, read: () => Promise<T>) => Promise<T>;

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
  /** On a rate-limited route: the request's rate-limit hit, which a `rateLimitWithHold` handler must count. */
  rateLimit?: DeferredRateLimit;
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
  /**
   * A body the handler reads and checks itself (the OAuth token endpoint answers in the RFC 6749
   * shape, not the envelope, and takes a form): described in the OpenAPI document under
   * these media types, never read or validated before the handler. Not used together with `body`.
   */
  documentedBody?: { schema: z.ZodType; mediaTypes: readonly string[] };
  responses: Record<number, RouteResponseSpec>;
  handle(
    ctx: RouteContext<
      BodySchema extends z.ZodType ? z.output<BodySchema> : undefined,
      QuerySchema extends z.ZodType ? z.output<QuerySchema> : undefined,
      Access
    >,
  ): Promise<Response> | Response;
  /**
   * Rewrites the authenticated request's parsed JSON body before it is validated (inference routes:
   * a preset the body names is merged in, so the merged body is what gets validated).
   */
  resolveBody?(raw: unknown, scope: ResolveScope): Promise<unknown>;
  /**
   * Called when an authenticated request is refused before the handler runs (rate limit, size, body
   * validation): inference routes record the refusal here (set by `defineInferenceRoute`).
   */
  onRefused?(ctx: RefusalContext, error: GatewayError): Promise<void>;
  /**
   * Where the caller's key is read (default: `Authorization: Bearer`): a wire whose clients send it
   * elsewhere (Anthropic's `x-api-key`) reads it here, throwing the `401` as `readBearerKey` does.
   */
  readApiKey?(request: Request): string;
  /**
   * The error response of this route's wire (default: the gateway's envelope), for every failure
   * once the route matched: authentication, validation, refusals, upstream failures.
   */
  renderError?(error: GatewayError, requestId: string): Response;
  /** The schema of `renderError`'s body, for the OpenAPI document (default: the gateway's envelope). */
  errorBody?: z.ZodType;
  /**
   * The handler gets the body as parsed from JSON (its keys in the caller's order) once `body` has
   * validated it, not the schema's output (which puts the schema's keys first): for a wire that
   * passes the caller's body on byte for byte (the Anthropic Messages API). Only for a schema that
   * transforms nothing.
   */
  bodyAsSent?: true;
  /**
   * `false` for an inference-key route that is not a model call (`/v1/messages/count_tokens`): it
   * counts no rate-limit hit, which every other inference route does.
   */
  countsRateLimit?: false;
  /**
   * An inference route whose handler counts the rate-limit hit itself (`ctx.rateLimit`): with its
   * credit hold, in the same round trip on Postgres, or on its own before any answer without one.
   * Otherwise the hit is counted before the body is read.
   */
  rateLimitWithHold?: boolean;
}

/**
 * Declares a route with its types inferred from its schemas. Inference routes are declared with
 * `defineInferenceRoute` (pipeline/), which records their refusals; here `onRefused` is required
 * for them.
 */
export function defineRoute<
  BodySchema extends z.ZodType | undefined = undefined,
  QuerySchema extends z.ZodType | undefined = undefined,
  Access extends RouteAccess = RouteAccess,
>(
  route: Route<BodySchema, QuerySchema, Access> &
    (Access extends 'inference' ? { onRefused: NonNullable<Route['onRefused']> } : unknown),
): Route {
  return route as unknown as Route;
}
