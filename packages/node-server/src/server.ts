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
  /** Anything with a Web fetch handler, normally the result of `createGateway`; `close()` (trace flush) runs after the drain. */
  gateway: { fetch: FetchHandler; close?: () => Promise<void> };
  /** Closed by `close()` once the last in-flight request has finished. */
  storage?: Pick<Storage, 'close'>;
  /** 0 picks a free port. */
  port: number;
  host: string;
  logger?: GatewayLogger;
  /** How long `close()` waits for in-flight requests (streams included) before cutting them. Default 30 s. */
  drainTimeoutMs?: number;
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
   * Stops accepting connections, lets in-flight requests finish (up to `drainTimeoutMs`, then cuts
   * them), closes the idle keep-alive sockets, then closes the storage. Safe to call more than once.
   */
  close(): Promise<void>;
}

/** Serves a fetch handler over node:http with keep-alive and a graceful, bounded shutdown. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const { logger, drainTimeoutMs = 30_000 } = options;
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

  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      closing = true;
      const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        logger?.info({ inFlight, drainTimeoutMs }, 'draining in-flight requests');
        const drained = await waitUntil((resolve) => (onIdle = resolve), drainTimeoutMs);
        if (!drained) logger?.warn({ inFlight }, 'drain timeout: cutting the remaining requests');
      }
      server.closeAllConnections();
      await serverClosed;
      await options.gateway.close?.();
      await options.storage?.close();
    })();
    return closed;
  };

  return { url, port, server, close };
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
