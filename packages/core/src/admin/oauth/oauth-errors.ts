import { z } from 'zod';
import { jsonResponse } from '../../http/responses.js';

/** The error codes of RFC 6749 §5.2 this gateway sends (plus `server_error`, for a fault of its own). */
type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'server_error';

const STATUS: Record<OAuthErrorCode, number> = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  server_error: 500,
};

/** Token answers are never cached, success included (RFC 6749 §5.1): they hold a key or a code. */
const NO_STORE: Readonly<Record<string, string>> = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

/**
 * A refusal of an OAuth endpoint, answered in the RFC 6749 shape `{error, error_description}`
 * rather than the gateway's envelope. The description is sent to the caller: it names parameters
 * and rules, never a secret, a code or a verifier.
 */
export class OAuthError extends Error {
  readonly status: number;

  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** Default: 401 for `invalid_client`, 500 for `server_error`, else 400. */
    status?: number,
  ) {
    super(description);
    this.name = 'OAuthError';
    this.status = status ?? STATUS[error];
  }
}

/** The RFC 6749 error body, as the OpenAPI document shows it. */
export const oauthErrorSchema = z
  .object({ error: z.string(), error_description: z.string() })
  .meta({ id: 'OAuthError' });

/** A JSON answer of an OAuth endpoint: `Cache-Control: no-store` and `Pragma: no-cache` always. */
export function oauthJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return jsonResponse(body, status, { ...NO_STORE, ...headers });
}

/**
 * The RFC 6749 error answer. A 401 carries `WWW-Authenticate: Basic` (RFC 6749 §5.2: the client
 * failed to authenticate, and HTTP Basic is how it may).
 */
export function oauthErrorResponse(error: OAuthError): Response {
  return oauthJson(
    { error: error.error, error_description: error.description },
    error.status,
    error.status === 401 ? { 'WWW-Authenticate': 'Basic realm="tollgate"' } : {},
  );
}
