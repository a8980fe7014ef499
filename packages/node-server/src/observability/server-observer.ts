import type { GatewayLogger, RequestObserver, RequestSummary } from '@tollgate/core';
import type { GatewayMetrics } from './gateway-metrics.js';

export interface ServerObserverOptions {
  logger: GatewayLogger;
  /** Where the metrics go; none without. */
  metrics?: GatewayMetrics | null;
}

/**
 * The Node server's request observer: one access line per request at `info` (health checks at
 * `debug`), one `warn` line per failed upstream attempt, and the metrics. Ids, names, codes, counts
 * and times only: the observer never sees content, and neither does the log.
 */
export function createServerObserver(options: ServerObserverOptions): RequestObserver {
  const { logger, metrics } = options;
  return {
    requestFinished(summary) {
      const line = accessLine(summary);
      if (summary.endpoint === 'healthz') logger.debug?.(line, 'request');
      else logger.info(line, 'request');
      metrics?.requestFinished(summary);
    },
    upstreamAttemptFailed(failure) {
      logger.warn(
        {
          requestId: failure.requestId,
          provider: failure.provider,
          model: failure.model,
          status: failure.status,
          reason: failure.reason,
          attempt: failure.attempt,
        },
        'upstream attempt failed',
      );
      metrics?.upstreamAttemptFailed(failure);
    },
    holdTaken({ requestId }) {
      metrics?.holdTaken(requestId);
    },
  };
}

/** The fields of an access line; the inference ones only for an inference request. */
export function accessLine(summary: RequestSummary): Record<string, unknown> {
  const line: Record<string, unknown> = {
    requestId: summary.requestId,
    method: summary.method,
    endpoint: summary.endpoint,
  };
  if (summary.path !== undefined) line.path = summary.path;
  line.keyId = summary.keyId;
  line.status = summary.status;
  line.errorCode = summary.errorCode;
  if (summary.outcome !== null) {
    line.outcome = summary.outcome;
    line.model = summary.model;
    line.provider = summary.provider;
    line.stream = summary.stream;
    line.promptTokens = summary.promptTokens;
    line.completionTokens = summary.completionTokens;
    line.cachedTokens = summary.cachedTokens;
    line.costMicros = summary.costMicros;
    line.attempts = summary.attempts;
    line.ttftMs = summary.ttftMs;
  }
  line.durationMs = summary.durationMs;
  return line;
}
