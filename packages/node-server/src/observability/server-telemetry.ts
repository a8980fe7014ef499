import type { BatchItemCounts, GatewayLogger, RequestObserver } from '@tollgate/core';
import { GatewayMetrics } from './gateway-metrics.js';
import type { MetricsEndpointOptions } from './metrics-endpoint.js';
import { createServerObserver } from './server-observer.js';

export interface ServerTelemetryOptions {
  logger: GatewayLogger;
  /** The config file's `metrics` section (default: enabled, no token). */
  metrics?: { enabled?: boolean; token?: string | undefined };
  /** The catalogue's model ids (metric labels stay within them; see `GatewayMetricsOptions`). */
  models?: Iterable<string>;
  /** Also collect prom-client's process metrics (default true). */
  processMetrics?: boolean;
  /** Batch items in storage by state, for `/metrics` (see `GatewayMetricsOptions`). */
  batchItems?: () => Promise<BatchItemCounts>;
}

export interface ServerTelemetry {
  /** For `createGateway({ observer })`. */
  observer: RequestObserver;
  /** For `startServer({ metrics })`; `undefined` when metrics are disabled. */
  metricsEndpoint: MetricsEndpointOptions | undefined;
  metrics: GatewayMetrics | null;
}

/** Access lines, upstream warnings and (unless disabled) the metrics `/metrics` serves, for one server. */
export function createServerTelemetry(options: ServerTelemetryOptions): ServerTelemetry {
  const enabled = options.metrics?.enabled !== false;
  const metrics = enabled
    ? new GatewayMetrics({
        ...(options.models && { models: options.models }),
        ...(options.processMetrics !== undefined && { processMetrics: options.processMetrics }),
        ...(options.batchItems && { batchItems: options.batchItems }),
      })
    : null;
  return {
    observer: createServerObserver({ logger: options.logger, metrics }),
    metricsEndpoint: metrics ? { metrics, token: options.metrics?.token ?? null } : undefined,
    metrics,
  };
}
