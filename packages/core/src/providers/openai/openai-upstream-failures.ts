import type { HttpResponse } from '../http-client.js';
import { parseRetryAfter, UpstreamError } from '../upstream-error.js';
import { readOpenAIErrorMessage } from './read-openai-error.js';

/**
 * The `UpstreamError` for a non-2xx answer: the provider's own message when its body has one (else
 * a short text naming the status), the status, and `Retry-After` in milliseconds from `now`.
 * Reads the whole body, which also hands the connection back.
 */
export async function httpFailure(response: HttpResponse, now: number): Promise<UpstreamError> {
  const text = await response.text().catch(() => '');
  const message = readOpenAIErrorMessage(text) ?? `upstream answered HTTP ${response.status}`;
  return new UpstreamError(
    'http',
    message,
    response.status,
    parseRetryAfter(response.header('retry-after'), now),
  );
}

/**
 * What to throw when the HTTP client throws: the error itself when the caller aborted (the gateway
 * knows why it aborted and must see its own reason) or when it already is an `UpstreamError`; else
 * an `UpstreamError` of kind `network` keeping the original as `cause` for the logs.
 */
export function networkFailure(error: unknown, signal: AbortSignal, context: string): unknown {
  if (signal.aborted || error instanceof UpstreamError) return error;
  const failure = new UpstreamError('network', `${context}: ${describe(error)}`);
  failure.cause = error;
  return failure;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // `fetch` says only "fetch failed"; the reason (ECONNREFUSED, a TLS error…) is in `cause`.
  const cause = error.cause instanceof Error ? error.cause.message : null;
  return cause ? `${error.message} (${cause})` : error.message;
}
