/** Methods any `/v1` route may use. */
const ALLOWED_METHODS = 'GET, POST, PATCH, DELETE, OPTIONS';
/** Named explicitly: `Access-Control-Allow-Headers: *` does not cover `Authorization`. */
const ALLOWED_HEADERS =
  'Authorization, Content-Type, Idempotency-Key, HTTP-Referer, X-Title, X-Api-Key, Anthropic-Version, Anthropic-Beta';
const EXPOSED_HEADERS =
  'X-Gateway-Request-Id, X-Gateway-Cost-Usd, X-Gateway-Idempotent-Replay, X-Gateway-Cache, Retry-After';

/** CORS headers sent on every `/v1` response. Keys are bearer tokens, never cookies, so any origin may call. */
export function applyCorsHeaders(headers: Headers): void {
  headers.set('Access-Control-Allow-Origin', '*');
  headers.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
}

/** The answer to a preflight on any `/v1` path. */
export function preflightResponse(): Response {
  const headers = new Headers({
    'Access-Control-Allow-Methods': ALLOWED_METHODS,
    'Access-Control-Allow-Headers': ALLOWED_HEADERS,
    'Access-Control-Max-Age': '86400',
  });
  applyCorsHeaders(headers);
  return new Response(null, { status: 204, headers });
}
