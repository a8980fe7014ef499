/**
 * Every error code of the spec, with the HTTP status and the coarse `type` it is sent with.
 * The spec fixes three pairs (insufficient_credit → billing_error, wrong_key_scope →
 * permission_error, upstream_error → api_error); the rest follow one rule by status:
 * 400/413/422 → invalid_request_error, 401 → authentication_error, 402 → billing_error,
 * 403 → permission_error, 404 → not_found_error, 409 → idempotency_error, 429 → rate_limit_error,
 * 5xx → api_error.
 */
export const ERROR_CODES = {
  invalid_request: { status: 400, type: 'invalid_request_error' },
  unauthenticated: { status: 401, type: 'authentication_error' },
  invalid_api_key: { status: 401, type: 'authentication_error' },
  key_revoked: { status: 401, type: 'authentication_error' },
  insufficient_credit: { status: 402, type: 'billing_error' },
  key_limit_exceeded: { status: 402, type: 'billing_error' },
  monthly_limit_exceeded: { status: 402, type: 'billing_error' },
  no_free_route: { status: 402, type: 'billing_error' },
  byok_key_rejected: { status: 402, type: 'billing_error' },
  wrong_key_scope: { status: 403, type: 'permission_error' },
  account_suspended: { status: 403, type: 'permission_error' },
  model_not_found: { status: 404, type: 'not_found_error' },
  not_found: { status: 404, type: 'not_found_error' },
  request_in_flight: { status: 409, type: 'idempotency_error' },
  payload_too_large: { status: 413, type: 'invalid_request_error' },
  guardrail_blocked: { status: 422, type: 'invalid_request_error' },
  rate_limited: { status: 429, type: 'rate_limit_error' },
  internal_error: { status: 500, type: 'api_error' },
  upstream_error: { status: 502, type: 'api_error' },
  no_provider_available: { status: 503, type: 'api_error' },
  plugin_unavailable: { status: 503, type: 'api_error' },
  storage_unavailable: { status: 503, type: 'api_error' },
  shutting_down: { status: 503, type: 'api_error' },
  upstream_timeout: { status: 504, type: 'api_error' },
} as const satisfies Record<string, { status: number; type: ErrorType }>;

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'billing_error'
  | 'idempotency_error'
  | 'api_error';

export type ErrorCode = keyof typeof ERROR_CODES;
