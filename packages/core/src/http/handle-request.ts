import { type AuthContext, authenticate, requireScope } from '../auth/authenticate.js';
import { ClientClosedError, GatewayError, internalError } from '../errors/gateway-error.js';
import { newId } from '../ids.js';
import { refuseBeforeHold } from '../metering/before-hold.js';
import { DeferredRateLimit } from '../protections/rate-limit.js';
import type { HandledRequest } from '../telemetry/request-observer.js';
import { applyCorsHeaders, preflightResponse } from './cors.js';
import { createRouteMatcher } from './match-route.js';
import { readJsonBody } from './read-json-body.js';
import { errorResponse } from './responses.js';
import type { GatewayDeps, Route } from './route.js';
import { queryObject, validate } from './validate.js';

/**
 * A request the gateway makes to itself on a caller's behalf (a batch item): already authenticated
 * as `auth`, under a request id chosen beforehand, and not counted against the rate limit.
 */
export interface OnBehalfOf {
  requestId: string;
  auth: AuthContext;
}

interface HandlerOptions {
  /** Largest accepted request body. */
  maxBodyBytes: number;
  /** A normalized path prefix the gateway is mounted under (`/llm`), or `''` (see `normalizeBasePath`). */
  basePath?: string;
}

/**
 * Turns the route table into the gateway's fetch handler: request id → CORS preflight → match →
 * authenticate and check scope → read and validate body and query → route handler. Every failure
 * becomes the error envelope here, in one place; every response carries `X-Gateway-Request-Id`,
 * and every `/v1` response carries CORS headers.
 */
export function createRequestHandler(routes: readonly Route[], deps: GatewayDeps, options: HandlerOptions) {
  const match = createRouteMatcher(routes);
  /** Model calls of this gateway between their authentication and their answer (or first byte). */
  let modelCallsInFlight = 0;
  const basePath = options.basePath ?? '';

  return async function handleRequest(request: Request, onBehalfOf?: OnBehalfOf): Promise<Response> {
    const requestId = onBehalfOf?.requestId ?? newId('req');
    const url = new URL(request.url);
    // Route matching sees the path under the base; `url.pathname` is rewritten in place.
    const inBase = basePath === '' || stripBasePath(url, basePath);
    const isV1 = inBase && (url.pathname === '/v1' || url.pathname.startsWith('/v1/'));
    const seen: HandledRequest = {
      requestId,
      method: request.method,
      path: url.pathname,
      startedAt: deps.now(),
      route: null,
      auth: undefined,
      errorCode: null,
    };
    deps.observers.opened(requestId);
    const matched: { route?: Route } = {};
    let response: Response;
    try {
      if (!inBase) {
        throw new GatewayError(
          'not_found',
          `No route for ${request.method} ${url.pathname}: this gateway answers under ${basePath}/.`,
        );
      }
      response = await dispatch(request, url, requestId, seen, matched, onBehalfOf?.auth);
    } catch (error) {
      const gatewayError = toGatewayError(error, deps, request, url);
      seen.errorCode = gatewayError.code;
      // A wire with its own error body (the Anthropic wire) renders it; every other route, the envelope.
      const render = matched.route?.renderError;
      response = render
        ? render(gatewayError, requestId)
        : errorResponse(gatewayError, requestId, deps.jsonResponse);
    }
    // Handlers may return immutable-header responses (e.g. a proxied upstream body); copy if so.
    try {
      finish(response.headers, requestId, isV1);
    } catch {
      response = new Response(response.body, response);
      finish(response.headers, requestId, isV1);
    }
    deps.observers.handled(seen, response.status, deps.now());
    return response;
  };

  async function dispatch(
    request: Request,
    url: URL,
    requestId: string,
    seen: HandledRequest,
    matched: { route?: Route },
    authenticated: AuthContext | undefined,
  ): Promise<Response> {
    if (request.method === 'OPTIONS' && url.pathname.startsWith('/v1')) return preflightResponse();
    const found = match(request.method, url.pathname);
    if (!found) {
      throw new GatewayError('not_found', `No route for ${request.method} ${basePath}${url.pathname}.`);
    }
    if ('allowed' in found) {
      throw new GatewayError(
        'not_found',
        `No route for ${request.method} ${basePath}${url.pathname} (allowed: ${found.allowed.join(', ')}).`,
      );
    }
    const { route, params } = found;
    seen.route = route;
    matched.route = route;
    const auth =
      route.access === 'public'
        ? undefined
        : (authenticated ??
          (await authenticate(request, deps.storage, {
            now: deps.now(),
            hashKey: deps.hashKey,
            // Only model calls: what reads or changes keys, limits and money reads them fresh.
            cache: route.access === 'inference' ? (deps.authCache ?? undefined) : undefined,
            ...(route.readApiKey && { readKey: route.readApiKey }),
          })));
    seen.auth = auth;
    if (auth && (route.access === 'inference' || route.access === 'provisioning'))
      requireScope(auth, route.access);
    let raw: unknown;
    let query: unknown;
    let body: unknown;
    // Every authenticated model call counts a rate-limit hit (a batch's items were counted as the batch).
    const limited =
      auth && route.access === 'inference' && route.countsRateLimit !== false && !authenticated
        ? auth
        : undefined;
    // Alone, a call counts its hit with its hold, a round trip less; with others in flight, first, so
    // that the calls which arrived together are counted in one batch and go on in step (measured at
    // 64 concurrent: 9 % fewer calls per second when every hit waited for its hold).
    const rateLimit = limited ? new DeferredRateLimit(deps, limited) : undefined;
    const countFirst = !(route.rateLimitWithHold && modelCallsInFlight === 0);
    if (limited) modelCallsInFlight++;
    try {
      try {
        if (rateLimit && countFirst) await rateLimit.count();
        query = route.query ? validate(route.query, queryObject(url), 'query') : undefined;
        raw = route.body ? await readJsonBody(request, options.maxBodyBytes) : undefined;
        if (route.body && route.resolveBody && auth) raw = await route.resolveBody(raw, { auth, deps });
        body = route.body ? validate(route.body, raw, 'body') : undefined;
        if (route.bodyAsSent) body = raw;
      } catch (error) {
        // Refused before the handler ran: a hit still to count is counted now, and a `429` wins.
        return await refuseBeforeHold(rateLimit, error, async (refusal) => {
          if (auth && route.onRefused)
            await route.onRefused({ request, requestId, auth, deps, body: raw }, refusal);
        });
      }
      return await route.handle({
        request,
        requestId,
        params,
        body,
        query,
        auth,
        deps,
        rateLimit,
      } as Parameters<Route['handle']>[0]);
    } finally {
      if (limited) modelCallsInFlight--;
    }
  }
}

/**
 * `basePath` in normalized form: `''` for none, else a leading `/` and no trailing one (`'llm/'` →
 * `'/llm'`). Throws `TypeError` for a value that is not a plain path.
 */
export function normalizeBasePath(basePath: string | undefined): string {
  const trimmed = (basePath ?? '').trim().replace(/\/+$/, '');
  if (trimmed === '') return '';
  const path = trimmed.startsWith('/') ? trimmed : `/${trimmed}`;
  if (/[?#\s]|\/\/|(^|\/)\.\.?(\/|$)/.test(path)) {
    throw new TypeError(`basePath must be a plain path such as "/llm", got "${basePath}".`);
  }
  // As a request URL's pathname spells it (percent-encoded).
  return new URL(path, 'http://localhost').pathname;
}

/** Removes `basePath` from the front of `url.pathname`; false (and `url` untouched) when the path is outside it. */
function stripBasePath(url: URL, basePath: string): boolean {
  const path = url.pathname;
  if (!path.startsWith(basePath)) return false;
  if (path.length === basePath.length) {
    url.pathname = '/';
    return true;
  }
  if (path[basePath.length] !== '/') return false;
  url.pathname = path.slice(basePath.length);
  return true;
}

function finish(headers: Headers, requestId: string, isV1: boolean): void {
  // An idempotent replay answers with the original request's id.
  if (!headers.has('X-Gateway-Request-Id')) headers.set('X-Gateway-Request-Id', requestId);
  if (isV1) applyCorsHeaders(headers);
}

/** Known failures pass through; anything else is logged (name, code and stack only) and made generic. */
function toGatewayError(error: unknown, deps: GatewayDeps, request: Request, url: URL): GatewayError {
  if (error instanceof ClientClosedError) {
    // Any key holder can hang up at will: routine, so never in the error log.
    deps.logger.debug?.({ method: request.method, path: url.pathname }, 'client closed the connection');
    return error;
  }
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
