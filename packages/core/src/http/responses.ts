import { errorEnvelope, type GatewayError } from '../errors/gateway-error.js';

/** A JSON response. */
export function jsonResponse(body: unknown, status = 200, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  return new Response(JSON.stringify(body), { status, headers: h });
}

/** The error envelope for a GatewayError, with its extra headers (e.g. Retry-After). */
export function errorResponse(error: GatewayError, requestId: string): Response {
  return jsonResponse(errorEnvelope(error, requestId), error.status, error.headers);
}
