import { GatewayError } from '../errors/gateway-error.js';
import { UpstreamError } from '../providers/upstream-error.js';

/**
 * The error of a stream that broke after it started: the gateway's own refusal as it is (an output
 * guardrail), `upstream_timeout` when the provider went silent, else `upstream_error`. The caller's
 * message may say why; the record keeps a fixed one.
 */
export function brokenStreamError(cause: unknown, forCaller: boolean): GatewayError {
  // A refusal of the gateway's own (an output guardrail) is told as it is.
  if (cause instanceof GatewayError) return cause;
  const timedOut = cause instanceof UpstreamError && cause.kind === 'timeout';
  const code = timedOut ? 'upstream_timeout' : 'upstream_error';
  if (!forCaller) {
    return new GatewayError(
      code,
      timedOut
        ? 'The provider stream stalled after it started.'
        : 'The provider stream broke after it started.',
    );
  }
  const why = cause instanceof UpstreamError ? cause.message : 'connection lost';
  const error = new GatewayError(code, `The provider stream ${timedOut ? 'stalled' : 'broke'}: ${why}`);
  // The writer may tell its caller more (the Responses wire names the upstream's error code).
  error.cause = cause;
  return error;
}
