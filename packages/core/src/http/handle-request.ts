import { authenticate, requireScope } from '../auth/authenticate.js';
import { GatewayError, internalError } from '../errors/gateway-error.js';
import { newId } from '../ids.js';
import { enforceRateLimit } from '../protections/rate-limit.js';
import { applyCorsHeaders, preflightResponse } from './cors.js';
import { createRouteMatcher } from './match-route.js';
import { readJsonBody } from './read-json-body.js';
import { errorResponse } from './responses.js';
import type { GatewayDeps, Route } from './route.js';
import { queryObject, validate } from './validate.js';

export interface HandlerOptions {
  /** Largest accepted request body. */
  maxBodyBytes: number;
}

/**
 * Turns the route table into the gateway's fetch handler: request id → CORS preflight → match →
 * authenticate and check scope → read and validate body and query → route handler. Every failure
 * becomes the error envelope here, in one place; every response carries `X-Gateway-Request-Id`,
 * and every `/v1` response carries CORS headers.
 */
export function createRequestHandler(routes: readonly Route[], deps: GatewayDeps, options: HandlerOptions) {
  const match = createRouteMatcher(routes);

  return async function handleRequest(request: Request): Promise<Response> {
    const requestId = newId('req');
    const url = new URL(request.url);
    const isV1 = url.pathname === '/v1' || url.pathname.startsWith('/v1/');
    let response: Response;
    try {
      response = await dispatch(request, url, requestId);
    } catch (error) {
      response = errorResponse(toGatewayError(error, deps, request, url), requestId);
    }
    // Handlers may return immutable-header responses (e.g. a proxied upstream body); copy if so.
    try {
      finish(response.headers, requestId, isV1);
    } catch {
      response = new Response(response.body, response);
      finish(response.headers, requestId, isV1);
    }
    return response;
  };

  async function dispatch(request: Request, url: URL, requestId: string): Promise<Response> {
    if (request.method === 'OPTIONS' && url.pathname.startsWith('/v1')) return preflightResponse();
    const found = match(request.method, url.pathname);
    if (!found) throw new GatewayError('not_found', `No route for ${request.method} ${url.pathname}.`);
    if ('allowed' in found) {
      throw new GatewayError(
        'not_found',
        `No route for ${request.method} ${url.pathname} (allowed: ${found.allowed.join(', ')}).`,
      );
    }
    const { route, params } = found;
    const auth =
      route.access === 'public' ? undefined : await authenticate(request, deps.storage, deps.hashKey);
    if (auth && (route.access === 'inference' || route.access === 'provisioning'))
      requireScope(auth, route.access);
    let raw: unknown;
    let query: unknown;
    let body: unknown;
    try {
      if (auth && route.access === 'inference') await enforceRateLimit(deps, auth);
      query = route.query ? validate(route.query, queryObject(url), 'query') : undefined;
      raw = route.body ? await readJsonBody(request, options.maxBodyBytes) : undefined;
      body = route.body ? validate(route.body, raw, 'body') : undefined;
    } catch (error) {
      if (auth && route.onRefused && error instanceof GatewayError) {
        await route.onRefused({ request, requestId, auth, deps, body: raw }, error);
      }
      throw error;
    }
    return route.handle({ request, requestId, params, body, query, auth, deps } as Parameters<
      Route['handle']
    >[0]);
  }
}

function finish(headers: Headers, requestId: string, isV1: boolean): void {
  // An idempotent replay answers with the original request's id.
  if (!headers.has('X-Gateway-Request-Id')) headers.set('X-Gateway-Request-Id', requestId);
  if (isV1) applyCorsHeaders(headers);
}

/** Known failures pass through; anything else is logged (name, code and stack only) and made generic. */
function toGatewayError(error: unknown, deps: GatewayDeps, request: Request, url: URL): GatewayError {
  if (error instanceof GatewayError) return error;
  // The message of an unexpected error may quote data; the log keeps what locates the fault.
  const err = error as { name?: string; code?: unknown; stack?: string };
  deps.logger.error(
    {
      method: request.method,
      path: url.pathname,
      err: { name: err?.name, code: err?.code, frames: err?.stack?.split('\n').slice(1, 8).join('\n') },
    },
    'unexpected failure',
  );
  return internalError();
}
