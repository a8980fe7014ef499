import type { GatewayError } from '../../errors/gateway-error.js';
import { UpstreamError } from '../../providers/upstream-error.js';

/** The `response.error.code`s a failed stream may end with (product.md "Errors"). */
type FailureCode =
  | 'server_error'
  | 'rate_limit_exceeded'
  | 'insufficient_quota'
  | 'context_length_exceeded'
  | 'invalid_prompt';

/** Upstream codes (OpenAI's, Anthropic's error types) that say one of the codes above. */
const UPSTREAM_CODES: Readonly<Record<string, FailureCode>> = {
  server_error: 'server_error',
  rate_limit_exceeded: 'rate_limit_exceeded',
  rate_limit_error: 'rate_limit_exceeded',
  insufficient_quota: 'insufficient_quota',
  context_length_exceeded: 'context_length_exceeded',
  invalid_prompt: 'invalid_prompt',
};

/**
 * The `error` of a `response.failed` for a stream that broke after its first byte: an output
 * guardrail that stopped it is `invalid_prompt` (the same request would be stopped again); an
 * upstream that named a code of its own passes it on when it is one of the five; anything else
 * (a broken connection, a stall, an overloaded upstream) is `server_error`. A `rate_limit_exceeded`
 * message always ends with "try again in Ns." (clients such as Codex read the wait from it).
 */
export function streamFailure(error: GatewayError): { code: FailureCode; message: string } {
  if (error.code === 'guardrail_blocked') return { code: 'invalid_prompt', message: error.message };
  const cause = error.cause;
  const upstream = cause instanceof UpstreamError ? cause : null;
  const code = (upstream?.code && UPSTREAM_CODES[upstream.code]) || 'server_error';
  if (code !== 'rate_limit_exceeded' || /try again in \d/i.test(error.message)) {
    return { code, message: error.message };
  }
  const seconds = Math.max(1, Math.ceil((upstream?.retryAfterMs ?? 1000) / 1000));
  return { code, message: `${error.message.replace(/\.?$/, '.')} Please try again in ${seconds}s.` };
}
