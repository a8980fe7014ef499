import { errorEnvelope, type GatewayError } from '../errors/gateway-error.js';

const encoder = new TextEncoder();

/** The bytes of every JSON response the gateway built, until the response is collected. */
const jsonBodies = new WeakMap<Response, Uint8Array>();

/**
 * A JSON response with its `Content-Length`: a body of known length lets a server adapter write it
 * in one go instead of streaming it chunk by chunk ({@link unreadJsonBody}).
 */
export function jsonResponse(body: unknown, status = 200, headers?: HeadersInit): Response {
  const bytes = encoder.encode(JSON.stringify(body));
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Content-Length', String(bytes.byteLength));
  const response = new Response(bytes, { status, headers: h });
  jsonBodies.set(response, bytes);
  return response;
}

/**
 * The body of a response {@link jsonResponse} built, while nobody has read it: what its stream
 * would yield. A server adapter writes these bytes instead of reading them back through the
 * stream (a `ReadableStream` read to its end, a promise per chunk, one copy more); any other
 * response, or one whose body was used, gives `undefined`.
 */
export function unreadJsonBody(response: Response): Uint8Array | undefined {
  return response.bodyUsed ? undefined : jsonBodies.get(response);
}

/** The error envelope for a GatewayError, with its extra headers (e.g. Retry-After). */
export function errorResponse(error: GatewayError, requestId: string): Response {
  return jsonResponse(errorEnvelope(error, requestId), error.status, error.headers);
}

/** One server-sent event: `data: …` (with `event: …` first when named) and the blank line. */
export function sseEvent(data: string, event?: string): Uint8Array {
  return encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${data}\n\n`);
}

/** The headers of a server-sent event stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
};
