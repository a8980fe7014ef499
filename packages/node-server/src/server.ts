import { once } from 'node:events';
import { createServer, maxHeaderSize, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  errorEnvelope,
  GatewayError,
  type GatewayLogger,
  newId,
  type Storage,
  tooLarge,
} from '@tollgate/core';
import type { DashboardAssets } from './dashboard/dashboard-assets.js';
import { createDashboardEndpoint } from './dashboard/dashboard-endpoint.js';
import { type FetchHandler, toNodeHandler } from './http/node-adapter.js';
import { createMetricsEndpoint, type MetricsEndpointOptions } from './observability/metrics-endpoint.js';

export interface StartServerOptions {
  /**
   * Anything with a Web fetch handler, normally the result of `createGateway`. `drain()` (the
   * gateway's: readiness 503, in-flight work cut and settled at the end of the grace) runs from
   * `close()`'s start, `close()` (trace flush) after the drain.
   */
  gateway: {
    fetch: FetchHandler;
    drain?: (options: { graceMs: number; accepting: Promise<unknown> }) => Promise<unknown>;
    close?: () => Promise<void>;
  };
  /** Closed by `close()` once the last in-flight request has finished. */
  storage?: Pick<Storage, 'close'>;
  /** 0 picks a free port. */
  port: number;
  host: string;
  logger?: GatewayLogger;
  /**
   * How long `close()` keeps accepting and serving new requests before it closes the listener, while
   * the gateway's `/readyz` already answers 503, so a load balancer stops sending first (default 0;
   * `tollgate serve` waits 5 s).
   */
  drainDelayMs?: number;
  /**
   * How long in-flight requests (streams included) may run, counted from `close()` (default 30 s).
   * Then the gateway cuts and settles what is left, and the connections are closed.
   */
  graceMs?: number;
  /** Serve `GET /metrics` (Prometheus text) from these metrics, optionally behind a bearer token. */
  metrics?: MetricsEndpointOptions;
  /** Serve the dashboard's built files at `/dashboard/` (see `loadDashboardAssets`). */
  dashboard?: DashboardAssets | null;
  /**
   * Hand `gateway.fetch` lazily built requests (`toNodeHandler`'s `lazyRequests`); on by default,
   * which Tollgate's gateway is made for. Turn it off for a handler that passes its request to
   * `fetch()` or `new Request()`.
   */
  lazyRequests?: boolean;
}

export interface RunningServer {
  /** The origin the server listens on, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  server: Server;
  /**
   * Drains and stops: the gateway's readiness turns 503 at once; new requests are still served for
   * `drainDelayMs`; then the listener closes and in-flight requests finish, until `graceMs` from
   * this call, when the gateway cuts and settles what is left; the connections are closed, then the
   * gateway (trace flush) and the storage. Safe to call more than once.
   */
  close(): Promise<void>;
}

/** How long cut streams get to write their last events before their connections are closed. */
const FLUSH_AFTER_CUT_MS = 1_000;

/** Serves a fetch handler over node:http with keep-alive and a graceful, bounded shutdown. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { logger, drainDelayMs = 0, graceMs = 30_000 } = options;
  const handle = toNodeHandler((request) => options.gateway.fetch(request), {
    onError: (error) => logger?.error({ err: error }, 'unhandled error in the request handler'),
    lazyRequests: options.lazyRequests ?? true,
  });

  const serveMetrics = options.metrics ? createMetricsEndpoint(options.metrics) : null;
  const serveDashboard = options.dashboard ? createDashboardEndpoint(options.dashboard) : null;

  let inFlight = 0;
  let closing = false;
  let onIdle: (() => void) | undefined;
  const server = createServer({ keepAlive: true }, (req, res) => {
    inFlight += 1;
    res.once('close', () => {
      inFlight -= 1;
      if (inFlight === 0) onIdle?.();
    });
    // While draining, a request on a kept-alive socket is served but ends the connection.
    if (closing) res.setHeader('connection', 'close');
    if (serveMetrics?.(req, res)) return;
    if (serveDashboard?.(req, res)) return;
    handle(req, res);
  });

  server.on('clientError', (error: NodeJS.ErrnoException, socket) => answerClientError(error, socket));
  server.listen(options.port, options.host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://${formatHost(options.host)}:${port}`;

  const idleWithin = (ms: number) =>
    inFlight === 0 ? Promise.resolve(true) : waitUntil((resolve) => (onIdle = resolve), Math.max(0, ms));

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing = true;
      const deadline = Date.now() + graceMs;
      let serverClosed!: Promise<void>;
      const stopAccepting = delay(Math.min(drainDelayMs, graceMs)).then(() => {
        serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
      });
      const gatewayDrained = options.gateway.drain?.({ graceMs, accepting: stopAccepting });
      await stopAccepting;
      if (inFlight > 0) logger?.info({ inFlight, graceMs }, 'draining in-flight requests');
      let idle = await idleWithin(deadline - Date.now());
      if (gatewayDrained) {
        await gatewayDrained;
        if (!idle) idle = await idleWithin(FLUSH_AFTER_CUT_MS);
      }
      if (!idle) logger?.warn({ inFlight }, 'grace period over: closing the remaining connections');
      server.closeAllConnections();
      await serverClosed;
      await options.gateway.close?.();
      await options.storage?.close();
    })();
    return closed;
  };

  return { url, port, server, close };
}

/** Resolves after `ms` (at once for 0). */
function delay(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves `true` when `arm`'s callback fires, `false` after `timeoutMs`. */
function waitUntil(arm: (resolve: () => void) => void, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    arm(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Requests node:http refuses before the gateway sees them (malformed, headers too large) still get
 * a request id and the error envelope, like every other response.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: import('node:stream').Duplex): void {
  if (!socket.writable || (socket as { _httpMessage?: unknown })._httpMessage) {
    socket.destroy();
    return;
  }
  const headersTooLarge = error.code === 'HPE_HEADER_OVERFLOW';
  const gatewayError = headersTooLarge
    ? tooLarge('Request headers', maxHeaderSize, maxHeaderSize, { atLeast: true })
    : new GatewayError('invalid_request', 'The HTTP request is malformed.');
  const requestId = newId('req');
  const body = JSON.stringify(errorEnvelope(gatewayError, requestId));
  socket.end(
    `HTTP/1.1 ${gatewayError.status} ${headersTooLarge ? 'Payload Too Large' : 'Bad Request'}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Gateway-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}
