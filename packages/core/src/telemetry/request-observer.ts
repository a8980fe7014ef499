import type { AuthContext } from '../auth/authenticate.js';
import type { RouteAccess } from '../http/route-access.js';
import type { FailedAttempt } from '../routing/walk-routes.js';
import type { RequestRecord, RequestStatus } from '../storage/metering-types.js';
import type { EpochMs } from '../storage/types.js';
import type { GatewayLogger } from './gateway-logger.js';

/**
 * One finished request, as an access-log line or a metric sees it: ids, names, codes, counts and
 * times. Never request or response content.
 */
export interface RequestSummary {
  requestId: string;
  method: string;
  /**
   * The route: `chat.completions`, `keys`, `keys.{id}`, `models`, `healthz`, … (its path template
   * without `/v1/`, `/` read as `.`); `preflight` for a CORS preflight, `unmatched` when no route
   * matched.
   */
  endpoint: string;
  /** The path as asked (no query string, at most 200 characters); only when no route matched. */
  path?: string;
  accountId: string | null;
  keyId: string | null;
  /** The catalogue model that served, else the one asked for (inference only; at most 200 characters). */
  model: string | null;
  provider: string | null;
  /** The HTTP status answered (499 when the client left first). */
  status: number;
  /** The gateway error code of a failed request (`insufficient_credits`, `upstream_error`, …). */
  errorCode: string | null;
  /** What the request record says happened (inference only): `success`, `refused`, `error`, … */
  outcome: RequestStatus | null;
  stream: boolean;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  costMicros: number;
  /** Usage beyond the hold that was not charged (a charge never exceeds its hold); normally 0. */
  overrunMicros: number;
  /** Upstream attempts made (0 when none was). */
  attempts: number;
  /** Time to the first streamed token (streams only). */
  ttftMs: number | null;
  durationMs: number;
}

/** One upstream attempt that failed: it was retried, failed over, or ended the walk. */
export interface UpstreamAttemptFailure {
  requestId: string;
  provider: string;
  /** The catalogue model of the route tried. */
  model: string;
  /** The provider's HTTP status; `null` for a timeout or a network error. */
  status: number | null;
  /** `http_503`, `timeout`, `network_error`. */
  reason: string;
  /** The attempt's number within the request, from 1. */
  attempt: number;
}

/**
 * What a host is told about the requests it serves, e.g. to write access-log lines and metrics.
 * Every method is optional, is called synchronously on the request path (so it must be cheap and
 * must not block), and never sees content. An observer that throws is logged and ignored.
 */
export interface RequestObserver {
  /** Once per request, when its answer is settled (for a stream: when the stream has ended). */
  requestFinished?(summary: RequestSummary): void;
  /** Once per failed upstream attempt. */
  upstreamAttemptFailed?(failure: UpstreamAttemptFailure): void;
  /** An inference request now holds credit; its `requestFinished` comes once the hold is settled. */
  holdTaken?(hold: { requestId: string }): void;
}

/** What the request handler learns of a request as it goes (see `createRequestHandler`). */
export interface HandledRequest {
  requestId: string;
  method: string;
  /** The path under the gateway's base path, without the query string. */
  path: string;
  startedAt: EpochMs;
  /** The route matched, once it is known. */
  route: { path: string; access: RouteAccess } | null;
  /** The caller's key, once authenticated. */
  auth: AuthContext | undefined;
  /** The gateway error code of an error answer. */
  errorCode: string | null;
}

/**
 * The gateway's side of the observer. It never throws, and it reports each request exactly once:
 * an inference request that got past authentication is reported by its record (`recordFinished`,
 * for a stream once the stream has ended); any other request (a 401, a 404, the keys API, …) by
 * the request handler when it has the answer (`handled`).
 */
export class RequestObservers {
  /** Requests the handler has open → whether their record has already reported them. */
  private readonly open = new Map<string, boolean>();
  private readonly reports: boolean;

  constructor(
    private readonly observer: RequestObserver,
    private readonly logger: GatewayLogger,
  ) {
    this.reports = typeof observer.requestFinished === 'function';
  }

  /** The request handler took the request. */
  opened(requestId: string): void {
    if (this.reports) this.open.set(requestId, false);
  }

  /** The request handler has the answer: reports the request unless its record does (or did). */
  handled(request: HandledRequest, status: number, now: EpochMs): void {
    if (!this.reports) return;
    const reportedByRecord = this.open.get(request.requestId) === true;
    this.open.delete(request.requestId);
    if (reportedByRecord) return;
    // A successful inference answer is always settled, and its record reports it.
    if (request.route?.access === 'inference' && request.auth && status < 400) return;
    this.report({
      requestId: request.requestId,
      method: request.method,
      endpoint: request.route
        ? endpointName(request.route.path)
        : request.method === 'OPTIONS' && status < 400
          ? 'preflight'
          : 'unmatched',
      ...(request.route === null && { path: request.path.slice(0, 200) }),
      accountId: request.auth?.account.id ?? null,
      keyId: request.auth?.key.id ?? null,
      model: null,
      provider: null,
      status,
      errorCode: request.errorCode,
      outcome: null,
      stream: false,
      promptTokens: 0,
      completionTokens: 0,
      cachedTokens: 0,
      costMicros: 0,
      overrunMicros: 0,
      attempts: 0,
      ttftMs: null,
      durationMs: Math.max(0, now - request.startedAt),
    });
  }

  /** An inference request's record is finished: written (or refused) and its span sent. */
  recordFinished(record: RequestRecord): void {
    if (!this.reports) return;
    if (this.open.has(record.id)) this.open.set(record.id, true);
    this.report(summaryOfRecord(record));
  }

  holdTaken(requestId: string): void {
    if (this.observer.holdTaken) this.call('holdTaken', () => this.observer.holdTaken?.({ requestId }));
  }

  /** The routing walk's `onAttemptFailed` for one request. */
  attemptFailed(requestId: string): (failed: FailedAttempt) => void {
    return (failed) => {
      if (!this.observer.upstreamAttemptFailed) return;
      this.call('upstreamAttemptFailed', () =>
        this.observer.upstreamAttemptFailed?.({ requestId, ...failed }),
      );
    };
  }

  private report(summary: RequestSummary): void {
    this.call('requestFinished', () => this.observer.requestFinished?.(summary));
  }

  private call(what: string, fn: () => void): void {
    try {
      fn();
    } catch (error) {
      this.logger.error(
        { observer: what, err: { name: (error as Error)?.name } },
        'the request observer threw',
      );
    }
  }
}

/** What the access line and the metrics keep of an inference request's record. */
function summaryOfRecord(record: RequestRecord): RequestSummary {
  return {
    requestId: record.id,
    method: 'POST',
    endpoint: record.endpoint,
    accountId: record.accountId,
    keyId: record.keyId,
    // A refused request's model is whatever the caller sent: bounded, as a log field.
    model: (record.model ?? record.requestedModel)?.slice(0, 200) ?? null,
    provider: record.provider,
    status: record.httpStatus,
    errorCode: record.errorCode,
    outcome: record.status,
    stream: record.stream,
    promptTokens: record.promptTokens,
    completionTokens: record.completionTokens,
    cachedTokens: record.cachedTokens,
    costMicros: record.costMicros,
    overrunMicros: record.overrunMicros ?? 0,
    attempts: record.attempts,
    ttftMs: record.ttftMs,
    durationMs: record.durationMs ?? 0,
  };
}

/** `/v1/keys/{id}` → `keys.{id}`, `/v1/chat/completions` → `chat.completions`, `/healthz` → `healthz`. */
function endpointName(pathTemplate: string): string {
  return (
    pathTemplate
      .replace(/^\/v1(\/|$)/, '/')
      .replace(/^\/+/, '')
      .replaceAll('/', '.') || 'root'
  );
}
