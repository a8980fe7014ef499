import type { BatchItemCounts, RequestSummary, UpstreamAttemptFailure } from '@tollgate/core';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Request latency buckets, in seconds (a stream lasts until its last chunk). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Time-to-first-token buckets, in seconds. */
const TTFT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60];

export interface GatewayMetricsOptions {
  /**
   * The catalogue's model ids. A model outside it (asked for, never served) is counted as `other`,
   * so a caller cannot grow the label set. Default: only models that served keep their id.
   */
  models?: Iterable<string>;
  /** Also collect prom-client's process metrics (CPU, memory, event loop, GC). Default true. */
  processMetrics?: boolean;
  /** Batch items in storage by state, read at each scrape (`tollgate_batch_items`). Default: none. */
  batchItems?: () => Promise<BatchItemCounts>;
}

/**
 * The gateway's Prometheus metrics, in a registry of their own (never prom-client's global one), so
 * several gateways in one process, and tests, do not collide. Fed by the server's request observer.
 * Per process: with `--workers N`, each worker counts what it served.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly knownModels: ReadonlySet<string>;
  /** Requests holding credit now; a hold ends when its request is reported finished. */
  private readonly holds = new Set<string>();

  private readonly requests = new Counter({
    name: 'tollgate_requests_total',
    help: 'Requests answered, by endpoint, model, provider and HTTP status.',
    labelNames: ['endpoint', 'model', 'provider', 'status'] as const,
    registers: [this.registry],
  });
  private readonly duration = new Histogram({
    name: 'tollgate_request_duration_seconds',
    help: 'Time from the request to its settled answer (a stream: to its end), by endpoint.',
    labelNames: ['endpoint'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly ttft = new Histogram({
    name: 'tollgate_time_to_first_token_seconds',
    help: 'Time to the first streamed token, by model and provider (streams only).',
    labelNames: ['model', 'provider'] as const,
    buckets: TTFT_BUCKETS,
    registers: [this.registry],
  });
  private readonly attempts = new Counter({
    name: 'tollgate_upstream_attempts_total',
    help: 'Upstream calls made, by provider.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  private readonly failures = new Counter({
    name: 'tollgate_upstream_failures_total',
    help: 'Upstream calls that failed (retried, failed over, or ending the walk), by provider and reason.',
    labelNames: ['provider', 'reason'] as const,
    registers: [this.registry],
  });
  private readonly holdsOpen = new Gauge({
    name: 'tollgate_holds_open',
    help: 'Inference requests holding credit right now (reserved, not yet settled).',
    registers: [this.registry],
  });
  private readonly spend = new Counter({
    name: 'tollgate_spend_micros_total',
    help: 'Cost charged, in micro-dollars (1e-6 USD), by model and provider.',
    labelNames: ['model', 'provider'] as const,
    registers: [this.registry],
  });

  private readonly overruns = new Counter({
    name: 'tollgate_charge_overruns_total',
    help: 'Requests whose reported usage exceeded their hold (charged at the hold), by model and provider.',
    labelNames: ['model', 'provider'] as const,
    registers: [this.registry],
  });
  private readonly overrunMicros = new Counter({
    name: 'tollgate_charge_overrun_micros_total',
    help: 'Usage beyond the hold that was not charged, in micro-dollars, by model and provider.',
    labelNames: ['model', 'provider'] as const,
    registers: [this.registry],
  });

  constructor(options: GatewayMetricsOptions = {}) {
    this.knownModels = new Set(options.models ?? []);
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry });
    const { batchItems } = options;
    if (batchItems) {
      new Gauge({
        name: 'tollgate_batch_items',
        help: 'Batch items in storage (all processes), by state: queued, running, completed, failed, cancelled.',
        labelNames: ['state'] as const,
        registers: [this.registry],
        async collect() {
          const counts = await batchItems();
          for (const [state, count] of Object.entries(counts)) this.set({ state }, count);
        },
      });
    }
  }

  requestFinished(summary: RequestSummary): void {
    const provider = summary.provider ?? '';
    const model = this.modelLabel(summary);
    this.requests.inc({ endpoint: summary.endpoint, model, provider, status: String(summary.status) });
    this.duration.observe({ endpoint: summary.endpoint }, summary.durationMs / 1000);
    if (summary.provider !== null) {
      // The walk ends at the first attempt that answers; the failed ones were counted as they failed.
      if (summary.attempts > 0) this.attempts.inc({ provider });
      if (summary.ttftMs !== null) this.ttft.observe({ model, provider }, summary.ttftMs / 1000);
    }
    if (summary.costMicros > 0) this.spend.inc({ model, provider }, summary.costMicros);
    if (summary.overrunMicros > 0) {
      this.overruns.inc({ model, provider });
      this.overrunMicros.inc({ model, provider }, summary.overrunMicros);
    }
    if (this.holds.delete(summary.requestId)) this.holdsOpen.dec();
  }

  upstreamAttemptFailed(failure: UpstreamAttemptFailure): void {
    this.attempts.inc({ provider: failure.provider });
    this.failures.inc({ provider: failure.provider, reason: failure.reason });
  }

  holdTaken(requestId: string): void {
    if (this.holds.has(requestId)) return;
    this.holds.add(requestId);
    this.holdsOpen.inc();
  }

  /** The Prometheus text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private modelLabel(summary: RequestSummary): string {
    const { model } = summary;
    if (model === null) return '';
    return summary.provider !== null || this.knownModels.has(model) ? model : 'other';
  }
}
