import type { CatalogueEndpoint, CatalogueModel } from '../catalogue/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import { UpstreamError } from '../providers/upstream-error.js';
import type { RoutingFailure } from '../storage/metering-types.js';
import type { EpochMs } from '../storage/types.js';
import { FAIL_OVER_STATUSES, fullJitterBackoff, RETRYABLE_STATUSES } from './backoff.js';

/** One candidate: a model of the fallback chain and one of its endpoints. */
export interface PlannedRoute {
  model: CatalogueModel;
  endpoint: CatalogueEndpoint;
  /** Set when the route calls the provider with the account's own key (BYOK) instead of the deployment's. */
  byok?: { keyId: string; allowFallback: boolean };
}

/** Time and chance, injected so that tests run without sleeping. */
export interface WalkClock {
  now(): EpochMs;
  random(): number;
  /** Resolves after `ms`, or rejects when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Runs `fn` after `ms`; returns a cancel function. */
  schedule(fn: () => void, ms: number): () => void;
}

export interface WalkOptions {
  attemptsPerRoute: number;
  /** The whole walk ends by then (60 s non-streaming, 300 s streaming from the start). */
  deadlineAt: EpochMs;
  /** The caller's signal: aborting it abandons the walk. */
  signal: AbortSignal;
  clock: WalkClock;
  /** Told of each failed attempt, as it fails (e.g. for a warning line and a metric). */
  onAttemptFailed?: (failed: FailedAttempt) => void;
}

/** One failed attempt of the walk. */
export interface FailedAttempt {
  provider: string;
  /** The catalogue model of the route. */
  model: string;
  /** The provider's HTTP status; `null` for a timeout or a network error. */
  status: number | null;
  /** `http_503`, `timeout`, `network_error` (without the try number). */
  reason: string;
  /** The attempt's number within the walk, from 1. */
  attempt: number;
}

interface WalkOutcome<T> {
  value: T;
  route: PlannedRoute;
  attempts: number;
  failures: RoutingFailure[];
}

/** Every route failed; `error` is what the caller gets. */
export class RoutingFailed extends Error {
  constructor(
    readonly error: GatewayError,
    readonly attempts: number,
    readonly failures: RoutingFailure[],
  ) {
    super(error.message);
    this.name = 'RoutingFailed';
  }
}

/**
 * The caller went away (its signal aborted) before the walk was over: no further attempt is made,
 * and the attempts already made stay known, for the record. `cause` is the signal's reason.
 */
export class WalkAbandoned extends Error {
  constructor(
    cause: unknown,
    readonly attempts: number,
    readonly failures: RoutingFailure[],
  ) {
    super(cause instanceof Error ? cause.message : 'the caller went away', { cause });
    this.name = 'WalkAbandoned';
  }
}

type Verdict = 'retry' | 'fail_over' | 'stop';

/**
 * Walks the candidate routes (spec "Limits", routing rules 1–5): each route gets its attempts
 * (inner loop), then the walk moves on. 408/425/429/5xx-listed statuses and network errors are
 * retried after a full-jitter backoff or the provider's Retry-After; 501/505 and timeouts fail over
 * at once; any other 4xx stops the walk and is returned as `400 invalid_request`. When a wait would
 * use up what is left of the deadline, the walk fails over at once.
 */
export async function walkRoutes<T>(
  routes: readonly PlannedRoute[],
  attempt: (route: PlannedRoute, call: AttemptControl) => Promise<T>,
  options: WalkOptions,
): Promise<WalkOutcome<T>> {
  const failures: RoutingFailure[] = [];
  let attempts = 0;
  const countAttempt = () => ++attempts;
  try {
    return await walk(routes, attempt, options, failures, countAttempt);
  } catch (error) {
    // A caller gone mid-walk (during an attempt or a backoff wait) stops it; nothing more is sent.
    if (options.signal.aborted && !(error instanceof RoutingFailed)) {
      throw new WalkAbandoned(options.signal.reason ?? error, attempts, failures);
    }
    throw error;
  }
}

async function walk<T>(
  routes: readonly PlannedRoute[],
  attempt: (route: PlannedRoute, call: AttemptControl) => Promise<T>,
  options: WalkOptions,
  failures: RoutingFailure[],
  countAttempt: () => number,
): Promise<WalkOutcome<T>> {
  const { clock } = options;
  /** How each route tried so far ended: its last failure. The final error is judged on these. */
  const endings: RoutingFailure[] = [];
  let attempts = 0;
  let smallestRetryAfter: number | null = null;
  let nextBackoff = 0;

  for (const route of routes) {
    for (let tryNumber = 1; tryNumber <= options.attemptsPerRoute; tryNumber++) {
      const remaining = options.deadlineAt - clock.now();
      if (remaining <= 0)
        throw finalError(failures, endings, attempts, smallestRetryAfter, nextBackoff, true);
      // A caller already gone gets no (further) upstream call.
      options.signal.throwIfAborted();
      attempts = countAttempt();
      const result = await runAttempt(route, remaining, attempt, options);
      if (result.ok) return { value: result.value, route, attempts, failures };

      const failure = result.error;
      const described = describeFailure(route, failure, tryNumber);
      failures.push(described);
      options.onAttemptFailed?.({
        provider: described.provider,
        model: route.model.id,
        status: described.status,
        reason: failureReason(failure),
        attempt: attempts,
      });
      if (tryNumber === 1) endings.push(described);
      else endings[endings.length - 1] = described;
      const verdict = classify(failure);
      if (route.byok && failure.kind === 'http' && (failure.status === 401 || failure.status === 403)) {
        throw new RoutingFailed(byokKeyRejected(route, failure.status), attempts, failures);
      }
      if (verdict === 'stop') {
        throw new RoutingFailed(
          new GatewayError(
            'invalid_request',
            `Provider ${route.endpoint.provider.id} refused the request (HTTP ${failure.status}): ${failure.message}`,
            {},
            // The provider's words may quote the request; the record keeps only ours.
            `Provider ${route.endpoint.provider.id} refused the request (HTTP ${failure.status}).`,
          ),
          attempts,
          failures,
        );
      }
      if (failure.retryAfterMs !== null) {
        smallestRetryAfter = Math.min(smallestRetryAfter ?? Number.POSITIVE_INFINITY, failure.retryAfterMs);
      }
      if (verdict === 'fail_over' || tryNumber === options.attemptsPerRoute) break;

      const wait = failure.retryAfterMs ?? fullJitterBackoff(tryNumber - 1, () => clock.random());
      nextBackoff = fullJitterBackoff(tryNumber, () => clock.random());
      // A wait that would use up what is left fails over at once.
      if (clock.now() + wait >= options.deadlineAt) break;
      await clock.sleep(wait, options.signal);
    }
  }
  throw finalError(failures, endings, attempts, smallestRetryAfter, nextBackoff, false);
}

/** The account's own key refused: `402 byok_key_rejected`; the walk stops, no paid route is tried. */
function byokKeyRejected(route: PlannedRoute, status: number): GatewayError {
  const provider = route.endpoint.provider.id;
  return new GatewayError(
    'byok_key_rejected',
    `Provider ${provider} rejected this account's own key (HTTP ${status}); nothing was sent to a paid route and nothing was charged. Replace the key with POST /v1/byok.`,
  );
}

/** What an attempt gets: the signal that cancels it, and a hook to call once the provider answered. */
export interface AttemptControl {
  signal: AbortSignal;
  /** Call when the response headers arrive: `timeout_ms` bounds the time to first byte only. */
  onResponse: () => void;
}

type AttemptResult<T> = { ok: true; value: T } | { ok: false; error: UpstreamError };

async function runAttempt<T>(
  route: PlannedRoute,
  remainingMs: number,
  attempt: (route: PlannedRoute, call: AttemptControl) => Promise<T>,
  options: WalkOptions,
): Promise<AttemptResult<T>> {
  const controller = new AbortController();
  let timedOut: string | null = null;
  const timeout = (message: string) => () => {
    timedOut = message;
    controller.abort(new UpstreamError('timeout', message));
  };
  // The walk's deadline bounds the whole attempt; `timeout_ms` bounds the time to first byte.
  const cancelDeadline = options.clock.schedule(
    timeout(`the routing deadline passed after ${remainingMs} ms`),
    remainingMs,
  );
  const perAttempt = route.endpoint.provider.timeoutMs;
  let cancelFirstByte =
    perAttempt !== null && perAttempt < remainingMs
      ? options.clock.schedule(timeout(`no response within ${perAttempt} ms`), perAttempt)
      : () => {};
  const onResponse = () => {
    cancelFirstByte();
    cancelFirstByte = () => {};
  };
  const onCallerAbort = () => controller.abort(options.signal.reason);
  options.signal.addEventListener('abort', onCallerAbort, { once: true });
  try {
    return { ok: true, value: await attempt(route, { signal: controller.signal, onResponse }) };
  } catch (error) {
    if (options.signal.aborted) throw options.signal.reason ?? error;
    if (timedOut !== null) return { ok: false, error: new UpstreamError('timeout', timedOut) };
    if (error instanceof UpstreamError) return { ok: false, error };
    throw error;
  } finally {
    cancelDeadline();
    cancelFirstByte();
    options.signal.removeEventListener('abort', onCallerAbort);
  }
}

function classify(error: UpstreamError): Verdict {
  if (error.kind === 'timeout') return 'fail_over';
  if (error.kind === 'network') return 'retry';
  const status = error.status ?? 502;
  if (RETRYABLE_STATUSES.has(status)) return 'retry';
  if (FAIL_OVER_STATUSES.has(status) || status >= 500) return 'fail_over';
  return 'stop';
}

/** `{provider, status, reason}` with reasons `http_503`, `http_503 (try 2)`, `timeout`, `network_error (try 3)`. */
function describeFailure(route: PlannedRoute, error: UpstreamError, tryNumber: number): RoutingFailure {
  const base = failureReason(error);
  return {
    provider: route.endpoint.provider.id,
    status: error.kind === 'http' ? error.status : null,
    reason: tryNumber > 1 ? `${base} (try ${tryNumber})` : base,
  };
}

/** `http_503`, `timeout` or `network_error`. */
function failureReason(error: UpstreamError): string {
  return error.kind === 'http'
    ? `http_${error.status}`
    : error.kind === 'timeout'
      ? 'timeout'
      : 'network_error';
}

/**
 * product.md: every route ended in 429 → `429 rate_limited` with Retry-After (the smallest wait
 * asked for, else the next backoff); every route ended in a timeout (or the deadline passed before
 * anything answered) → `504 upstream_timeout`; any other mix → `502 upstream_error`.
 */
function finalError(
  failures: RoutingFailure[],
  endings: RoutingFailure[],
  attempts: number,
  smallestRetryAfter: number | null,
  nextBackoff: number,
  deadlinePassed: boolean,
): RoutingFailed {
  const everyRouteEnded = (test: (f: RoutingFailure) => boolean) => endings.length > 0 && endings.every(test);
  let error: GatewayError;
  if (!deadlinePassed && everyRouteEnded((f) => f.status === 429)) {
    const seconds = Math.max(1, Math.ceil((smallestRetryAfter ?? nextBackoff) / 1000));
    error = new GatewayError('rate_limited', 'Every provider of this model is rate limiting; retry later.', {
      'Retry-After': String(seconds),
    });
  } else if (deadlinePassed || everyRouteEnded((f) => f.reason.startsWith('timeout'))) {
    error = new GatewayError('upstream_timeout', 'No provider answered in time.');
  } else {
    error = new GatewayError('upstream_error', 'Every provider tried failed; the request was not charged.');
  }
  error.lastUpstreamStatus = failures.at(-1)?.status ?? null;
  return new RoutingFailed(error, attempts, failures);
}

/** The real clock: `Date.now`, `Math.random`, and timers. */
export const systemClock: WalkClock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep: (ms, signal) =>
    new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }),
  schedule: (fn, ms) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};
