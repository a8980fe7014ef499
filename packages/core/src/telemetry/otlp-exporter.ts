import { fetchHttpClient, type HttpClient } from '../providers/http-client.js';
import { encodeTraces } from './encode-otlp-json.js';
import type { GatewayLogger } from './gateway-logger.js';
import type { RequestSpan } from './request-span.js';
import { cryptoRandomBytes, type RandomBytes, randomSpanIds } from './span-ids.js';
import { DropOldestQueue } from './span-queue.js';

interface OtlpExporterOptions {
  /** The collector's base URL (`/v1/traces` is appended) or its full traces URL. */
  endpoint: string;
  /** Extra request headers, e.g. a collector API key. Never logged. */
  headers?: Record<string, string>;
  /** Each POST is aborted after this long (default 1000 ms). */
  timeoutMs?: number;
  /** Defaults to Web `fetch`; the Node server passes its pooled client. */
  http?: HttpClient;
  logger?: GatewayLogger;
  /** Spans held at most; when full the oldest is dropped (default 2048). */
  maxQueue?: number;
  /** Spans per POST; a full batch is sent at once (default 128). */
  maxBatch?: number;
  /** A partial batch is sent, and drops are reported, this often (default 1000 ms). */
  flushIntervalMs?: number;
  serviceName?: string;
  serviceVersion?: string;
  /** Random bytes for trace and span ids; injectable for tests. */
  random?: RandomBytes;
}

export interface OtlpExporterStats {
  /** Spans waiting to be sent. */
  queued: number;
  /** Spans dropped unsent: queue overflow, export after shutdown, or left at shutdown. */
  dropped: number;
  /** POSTs in flight: 0 or 1. */
  inFlight: number;
  /** Spans a collector accepted (2xx). */
  sent: number;
  /** Spans in batches that failed (error status, network error, timeout). */
  failed: number;
}

export interface OtlpExporter {
  /** Queues a span. O(1); never awaits, never throws. */
  export(span: RequestSpan): void;
  /** Sends what is queued now; resolves when done, or at the first failed batch. Never rejects. */
  flush(): Promise<void>;
  /** Stops the timer, flushes, and drops (and reports) anything still unsent. */
  shutdown(): Promise<void>;
  stats(): OtlpExporterStats;
}

/**
 * A fire-and-forget OTLP/HTTP JSON trace exporter. A slow or dead collector can never delay a
 * request: `export()` only enqueues; a bounded queue keeps memory flat while nothing drains it;
 * one POST at a time, each aborted after `timeoutMs`; a failed batch is logged and dropped, never
 * retried. Throws only at creation, for an endpoint that is not an http(s) URL.
 */
export function createOtlpExporter(options: OtlpExporterOptions): OtlpExporter {
  const url = otlpTracesUrl(options.endpoint);
  const timeoutMs = options.timeoutMs ?? 1000;
  const flushIntervalMs = options.flushIntervalMs ?? 1000;
  const queue = new DropOldestQueue<RequestSpan>(options.maxQueue ?? 2048);
  const maxBatch = Math.max(1, Math.min(options.maxBatch ?? 128, queue.capacity));
  const http = options.http ?? fetchHttpClient();
  const logger = options.logger ?? consoleLogger;
  const headers = { ...options.headers, 'content-type': 'application/json' };
  const resource = {
    serviceName: options.serviceName ?? 'tollgate',
    serviceVersion: options.serviceVersion ?? 'unknown',
  };
  const ids = randomSpanIds(options.random ?? cryptoRandomBytes);

  let dropped = 0;
  let sent = 0;
  let failed = 0;
  let droppedUnreported = 0;
  let failuresUnreported = 0;
  let failureLoggedThisInterval = false;
  let inFlight: Promise<boolean> | null = null;
  let pumpScheduled = false;
  let timer: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  let shutdownDone: Promise<void> | undefined;

  function log(level: 'warn' | 'error', obj: object, msg: string): void {
    try {
      logger[level](obj, msg);
    } catch {
      // A broken logger must not break export.
    }
  }

  /** Drop and repeat-failure counts, logged as one line each: at most once per interval. */
  function reportCounts(): void {
    if (droppedUnreported > 0) {
      log('warn', { dropped: droppedUnreported }, 'otlp trace queue full; oldest spans dropped');
      droppedUnreported = 0;
    }
    if (failuresUnreported > 0) {
      log('warn', { failedBatches: failuresUnreported }, 'otlp trace export failed again; batches dropped');
      failuresUnreported = 0;
    }
  }

  function reportFailure(spans: number, detail: object): void {
    failed += spans;
    if (failureLoggedThisInterval) {
      failuresUnreported += 1;
      return;
    }
    failureLoggedThisInterval = true;
    log('warn', { ...detail, spans }, 'otlp trace export failed; batch dropped');
  }

  async function post(batch: RequestSpan[]): Promise<boolean> {
    const controller = new AbortController();
    // Not unref'd: it bounds how long a pending POST can hold the process, and `await shutdown()`
    // needs something to keep the process alive until it resolves.
    const timeout = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const body = JSON.stringify(encodeTraces(batch, resource, ids));
      const response = await http.request(url, { method: 'POST', headers, body, signal: controller.signal });
      // Read the (small) reply so a keep-alive connection can be reused.
      await response.text();
      if (response.status >= 200 && response.status < 300) {
        sent += batch.length;
        return true;
      }
      reportFailure(batch.length, { status: response.status });
      return false;
    } catch (error) {
      reportFailure(batch.length, describeError(error, controller.signal.aborted));
      return false;
    } finally {
      clearTimeout(timeout);
    }
  }

  /** Sends one batch unless a POST is already in flight: at most one at a time. */
  function startBatch(): Promise<boolean> | null {
    if (inFlight || queue.size === 0) return null;
    const request = post(queue.take(maxBatch)).finally(() => {
      inFlight = null;
      // Full batches behind a finished one go straight away; a partial one waits for the timer.
      if (!closed && queue.size >= maxBatch) schedulePump();
    });
    inFlight = request;
    return request;
  }

  /** Defers sending out of `export()`'s call stack, so encoding never runs inside a request. */
  function schedulePump(): void {
    if (pumpScheduled) return;
    pumpScheduled = true;
    queueMicrotask(() => {
      pumpScheduled = false;
      startBatch();
    });
  }

  function tick(): void {
    reportCounts();
    failureLoggedThisInterval = false;
    startBatch();
  }

  /** Started on first export, not at creation: some runtimes forbid timers at module scope. */
  function startTimer(): void {
    if (timer !== undefined || closed) return;
    timer = setInterval(tick, flushIntervalMs);
    unrefTimer(timer);
  }

  async function flush(): Promise<void> {
    try {
      // Only what is queued now; spans arriving meanwhile wait, so flush ends under steady load.
      let budget = queue.size;
      for (;;) {
        if (inFlight) {
          if (!(await inFlight)) return;
          continue;
        }
        if (budget <= 0 || queue.size === 0) return;
        budget -= Math.min(maxBatch, queue.size);
        const request = startBatch();
        // A failed batch means the collector is down or refusing: stop rather than wait
        // `timeoutMs` once per remaining batch.
        if (!request || !(await request)) return;
      }
    } catch {
      // flush never rejects.
    }
  }

  return {
    export(span) {
      try {
        if (closed) {
          dropped += 1;
          return;
        }
        if (queue.push(span)) {
          dropped += 1;
          droppedUnreported += 1;
        }
        startTimer();
        if (queue.size >= maxBatch) schedulePump();
      } catch {
        // Telemetry must never fail a request.
      }
    },
    flush,
    shutdown() {
      if (!shutdownDone) {
        closed = true;
        if (timer !== undefined) clearInterval(timer);
        timer = undefined;
        shutdownDone = flush().then(() => {
          const left = queue.clear();
          dropped += left;
          droppedUnreported += left;
          reportCounts();
        });
      }
      return shutdownDone;
    },
    stats: () => ({ queued: queue.size, dropped, inFlight: inFlight ? 1 : 0, sent, failed }),
  };
}

/**
 * The traces URL for an endpoint: `/v1/traces` appended to a base URL (trailing slashes removed),
 * or the URL as given when it already ends in `/v1/traces`. Throws `TypeError` unless it is an
 * http(s) URL.
 */
export function otlpTracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  // `collector:4318` parses as a URL with scheme `collector:`; catch that at startup.
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new TypeError(`OTLP endpoint must be an http(s) URL, got scheme ${url.protocol}`);
  }
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path.endsWith('/v1/traces') ? path : `${path}/v1/traces`;
  return url.toString();
}

/** The error's name and code only: a message could quote the URL, its credentials or the body. */
function describeError(
  error: unknown,
  timedOut: boolean,
): { error: string; code?: string; timedOut: boolean } {
  const err = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown;
    cause?: unknown;
  };
  const name = typeof err.name === 'string' ? err.name : typeof error;
  const cause = (typeof err.cause === 'object' && err.cause !== null ? err.cause : {}) as { code?: unknown };
  const code = typeof cause.code === 'string' ? cause.code : undefined;
  return code ? { error: name, code, timedOut } : { error: name, timedOut };
}

/** Lets the process exit while the interval timer is armed, where the runtime's timers support it. */
function unrefTimer(timer: unknown): void {
  if (typeof timer === 'object' && timer !== null && 'unref' in timer && typeof timer.unref === 'function') {
    timer.unref();
  }
}

const consoleLogger: GatewayLogger = {
  info: (obj, msg) => console.info(JSON.stringify({ level: 'info', msg, ...obj })),
  warn: (obj, msg) => console.warn(JSON.stringify({ level: 'warn', msg, ...obj })),
  error: (obj, msg) => console.error(JSON.stringify({ level: 'error', msg, ...obj })),
};
