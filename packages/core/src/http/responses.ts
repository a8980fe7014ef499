import { errorEnvelope, type GatewayError } from '../errors/gateway-error.js';

const encoder = new TextEncoder();

/**
 * Makes the `Response` of a JSON answer from its bytes, status and headers (`Content-Type` and
 * `Content-Length` already set). The core's is a plain `Response`; a server adapter may pass its
 * own (`GatewayOptions.jsonResponse`), one it writes faster.
 */
export type JsonResponseMaker = (
  bytes: Uint8Array<ArrayBuffer>,
  status: number,
  headers: Headers,
) => Response;

/** The default {@link JsonResponseMaker}: an ordinary `Response` over the bytes. */
export const plainJsonResponse: JsonResponseMaker = (bytes, status, headers) =>
  new Response(bytes, { status, headers });

/** A JSON answer as the gateway builds it: the body, a status (default 200) and extra headers. */
export type JsonResponder = (body: unknown, status?: number, headers?: HeadersInit) => Response;

/**
 * A JSON response with its `Content-Length`: a body of known length lets a server adapter write it
 * in one go instead of streaming it chunk by chunk. Made by `make` (the gateway's maker is
 * `deps.jsonResponse`).
 */
export function jsonResponse(
  body: unknown,
  status = 200,
  headers?: HeadersInit,
  make: JsonResponseMaker = plainJsonResponse,
): Response {
  const bytes = encoder.encode(JSON.stringify(body));
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Content-Length', String(bytes.byteLength));
  return make(bytes, status, h);
}

/** {@link jsonResponse} with `make` bound: the gateway's `deps.jsonResponse`. */
export function jsonResponder(make: JsonResponseMaker): JsonResponder {
  return (body, status, headers) => jsonResponse(body, status, headers, make);
}

/** The error envelope for a GatewayError, with its extra headers (e.g. Retry-After). */
export function errorResponse(
  error: GatewayError,
  requestId: string,
  json: JsonResponder = jsonResponse,
): Response {
  return json(errorEnvelope(error, requestId), error.status, error.headers);
}

/** One server-sent event: `data: …` (with `event: …` first when named) and the blank line. */
function _sseEvent(data: string, event?: string): Uint8Array {
  return encodeText(sseEventText(data, event));
}

/** {@link sseEvent} as text, for events sent together. */
export function sseEventText(data: string, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}

/** UTF-8 bytes of `text`. */
export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The headers of a server-sent event stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
};
