import { z } from 'zod';
import type { GatewayError } from '../../errors/gateway-error.js';
import { jsonResponse } from '../../http/responses.js';

/** Anthropic's error types (its API's `error.type`). */
type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

/** Anthropic's "overloaded" status, which the gateway retries and fails over like a 503. */
const OVERLOADED_STATUS = 529;

/** By the status the gateway chose (product.md); anything not named is a request error or an API error. */
const TYPE_BY_STATUS: Record<number, AnthropicErrorType> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  [OVERLOADED_STATUS]: 'overloaded_error',
};

/**
 * The status and Anthropic error type an error is answered with on the Messages wire: the gateway's
 * status, except a routing walk whose last attempt got Anthropic's 529 ("overloaded"), which stays a
 * 529 here (the spec's own endpoints answer `502 upstream_error`).
 */
function anthropicStatusOf(error: GatewayError): { status: number; type: AnthropicErrorType } {
  const status =
    error.code === 'upstream_error' && error.lastUpstreamStatus === OVERLOADED_STATUS
      ? OVERLOADED_STATUS
      : error.status;
  return { status, type: TYPE_BY_STATUS[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error') };
}

/**
 * Anthropic's error body: `{type: "error", error: {type, message}, request_id}`. The message starts
 * with the gateway's own code (`key_limit_exceeded: …`), so nothing the spec's codes tell is lost.
 */
export function anthropicErrorBody(error: GatewayError, requestId: string) {
  const { type } = anthropicStatusOf(error);
  return {
    type: 'error' as const,
    error: { type, message: `${error.code}: ${error.message}` },
    request_id: requestId,
  };
}

/** The Messages wire's error response (`Route.renderError`): its body and status, `Retry-After` and the like kept. */
export function renderMessagesError(error: GatewayError, requestId: string): Response {
  const { status } = anthropicStatusOf(error);
  return jsonResponse(anthropicErrorBody(error, requestId), status, error.headers);
}

/** Anthropic's error body, for the OpenAPI document. */
export const anthropicErrorSchema = z
  .object({
    type: z.literal('error'),
    error: z.object({ type: z.string(), message: z.string() }),
    request_id: z.string(),
  })
  .meta({ id: 'AnthropicError' });
