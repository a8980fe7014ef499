/**
 * Why one attempt at an upstream failed. `http`: the provider answered with a non-2xx status;
 * `network`: the connection failed or broke; `timeout`: no first byte within the attempt's time.
 * `message` is the provider's own message (for 4xx pass-back); it never holds request content.
 */
export class UpstreamError extends Error {
  constructor(
    readonly kind: 'http' | 'network' | 'timeout',
    message: string,
    readonly status: number | null = null,
    /** The provider's `Retry-After`, converted to milliseconds from now; `null` when absent. */
    readonly retryAfterMs: number | null = null,
    /**
     * The provider's own error code when it gave one in a stream (`rate_limit_exceeded`,
     * `context_length_exceeded`, …), so a wire that names codes can pass it on; else `null`.
     */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

/**
 * Parses `Retry-After` in either form the HTTP spec allows: delay-seconds or an HTTP-date.
 * Returns milliseconds from `now` (never negative), or `null` when absent or unreadable.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  if (value === null) return null;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * What to throw when reaching or reading an upstream throws: the error itself when `signal` aborted
 * (the gateway knows why it aborted and must see its own reason) or when it already is an
 * `UpstreamError`; else `UpstreamError('network', message)` keeping the original as `cause` for
 * the logs.
 */
export function networkFailure(error: unknown, signal: AbortSignal, message: string): unknown {
  if (signal.aborted || error instanceof UpstreamError) return error;
  const failure = new UpstreamError('network', message);
  failure.cause = error;
  return failure;
}
