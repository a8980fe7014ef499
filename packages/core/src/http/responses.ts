import { errorEnvelope, type GatewayError } from '../errors/gateway-error.js';

const encoder = new TextEncoder();

/**
 * A JSON response with its `Content-Length`: a body of known length lets a server adapter write it
 * in one go instead of streaming it chunk by chunk.
 */
export function jsonResponse(body: unknown, status = 200, headers?: HeadersInit): Response {
  const bytes = encoder.encode(JSON.stringify(body));
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Content-Length', String(bytes.byteLength));
  return new Response(bytes, { status, headers: h });
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
