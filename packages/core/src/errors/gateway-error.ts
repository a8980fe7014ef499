import { ERROR_CODES, type ErrorCode, type ErrorType } from './error-codes.js';

/**
 * The one error type of the gateway. Its code picks the status and type from `ERROR_CODES`; the
 * message is sent to the caller, so it must never hold request content or internal details.
 */
export class GatewayError extends Error {
  readonly status: number;
  readonly type: ErrorType;
  /**
   * For the error that ends a routing walk: the HTTP status of its last upstream attempt (`null` for
   * a timeout or a network failure), so a wire skin can word it its own way (Anthropic's 529).
   */
  lastUpstreamStatus?: number | null;

  constructor(
    readonly code: ErrorCode,
    message: string,
    /** Extra response headers, such as `Retry-After`. */
    readonly headers: Record<string, string> = {},
    /**
     * What the request record keeps instead of `message`, when the message carries text the gateway
     * did not write (a provider's own error message could quote the prompt).
     */
    readonly recordedMessage: string = message,
  ) {
    super(message);
    this.name = 'GatewayError';
    this.status = ERROR_CODES[code].status;
    this.type = ERROR_CODES[code].type;
  }
}

/**
 * The caller went away (hung up during the body upload, or before the answer): nobody reads the
 * answer, and it is no fault of the gateway's. The record says `client_closed` (HTTP 499); the
 * server logs it at debug, never as an unexpected failure.
 */
export class ClientClosedError extends GatewayError {
  constructor(message = 'The client closed the connection before the answer.') {
    super('invalid_request', message);
    this.name = 'ClientClosedError';
  }
}

/** The spec's error envelope. */
export interface ErrorEnvelope {
  error: { message: string; type: ErrorType; code: ErrorCode; request_id: string };
}

export function errorEnvelope(error: GatewayError, requestId: string): ErrorEnvelope {
  return { error: { message: error.message, type: error.type, code: error.code, request_id: requestId } };
}

/** What an unexpected failure looks like to the caller: deliberately generic. */
export function internalError(): GatewayError {
  return new GatewayError('internal_error', 'The gateway failed unexpectedly. The request was not billed.');
}
