import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '@tollgate/core';
import { requestPath, sendError } from '../http/send-error.js';
import type { GatewayMetrics } from './gateway-metrics.js';

/** Where the metrics are served: outside `/v1`, beside `/healthz`. */
export const METRICS_PATH = '/metrics';

export interface MetricsEndpointOptions {
  metrics: GatewayMetrics;
  /** When set, a scrape must send `Authorization: Bearer <token>`; any other gets 401. */
  token?: string | null;
}

/**
 * `GET /metrics` (and `HEAD`) in Prometheus text format, served by the Node server before the
 * request reaches the gateway. Returns a node:http listener that answers and returns true for
 * `/metrics`, and returns false for any other path.
 */
export function createMetricsEndpoint(
  options: MetricsEndpointOptions,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const expected = options.token ? digest(`Bearer ${options.token}`) : null;
  return (req, res) => {
    if (requestPath(req.url) !== METRICS_PATH) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      // As the gateway answers a method a path does not have.
      const message = `No route for ${req.method} ${METRICS_PATH} (allowed: GET, HEAD).`;
      sendError(res, new GatewayError('not_found', message));
      return true;
    }
    const authorization = req.headers.authorization;
    if (expected && !(authorization && timingSafeEqual(digest(authorization), expected))) {
      const message = `${METRICS_PATH} needs the metrics token: Authorization: Bearer <token>.`;
      sendError(res, new GatewayError(authorization ? 'invalid_api_key' : 'unauthenticated', message), {
        'WWW-Authenticate': 'Bearer realm="metrics"',
      });
      return true;
    }
    void options.metrics.text().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': options.metrics.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      () => sendError(res, new GatewayError('internal_error', 'The metrics could not be collected.')),
    );
    return true;
  };
}

/** A fixed-length digest, so the comparison takes the same time whatever was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
