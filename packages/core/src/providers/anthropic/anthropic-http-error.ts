import type { HttpResponse } from '../http-client.js';
import { parseRetryAfter, UpstreamError } from '../upstream-error.js';
import { anthropicErrorSchema } from './anthropic-wire-schemas.js';

/**
 * A non-2xx answer → `UpstreamError('http', <Anthropic's own message>, status, retryAfterMs)`.
 * The message comes from the error envelope `{type:'error', error:{type, message}}`; a body that is
 * not one (a proxy's HTML page, an empty body) gives a generic message and is never echoed.
 */
export async function readAnthropicHttpError(
  response: HttpResponse,
  now: number,
  signal: AbortSignal,
): Promise<UpstreamError> {
  let text = '';
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw error;
  }
  const retryAfterMs = parseRetryAfter(response.header('retry-after'), now);
  return new UpstreamError('http', errorMessage(text, response.status), response.status, retryAfterMs);
}

function errorMessage(text: string, status: number): string {
  try {
    const parsed = anthropicErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.error.message !== '') return parsed.data.error.message;
  } catch {
    // not JSON: fall through
  }
  return `anthropic answered HTTP ${status}`;
}
