import type { ServerResponse } from 'node:http';
import { errorEnvelope, type GatewayError, newId } from '@tollgate/core';

/**
 * Answers with the gateway's error envelope and a request id, like every answer of the gateway:
 * for the endpoints the Node server serves itself (`/metrics`, `/dashboard`).
 */
export function sendError(
  res: ServerResponse,
  error: GatewayError,
  headers: Record<string, string> = {},
): void {
  const requestId = newId('req');
  const body = JSON.stringify(errorEnvelope(error, requestId));
  res.writeHead(error.status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'X-Gateway-Request-Id': requestId,
    ...headers,
  });
  res.end(body);
}

/** The path of a request target, without its query. */
export function requestPath(url: string | undefined): string {
  const target = url ?? '/';
  const query = target.indexOf('?');
  return query === -1 ? target : target.slice(0, query);
}
