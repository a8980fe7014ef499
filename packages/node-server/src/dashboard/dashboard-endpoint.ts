import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from '@tollgate/core';
import { requestPath, sendError } from '../http/send-error.js';
import type { DashboardAsset, DashboardAssets } from './dashboard-assets.js';

/** Where the Node server serves the dashboard: beside `/v1`, on the same origin. */
export const DASHBOARD_PATH = '/dashboard';

/**
 * The dashboard loads only its own files and talks only to its own origin; nothing inline, nothing
 * framed, no form posted anywhere. So an injected script or style has nowhere to run or report to.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Sent with every dashboard answer, the 404 included. */
const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': DASHBOARD_CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Pages that are the app itself: its start page, and the OAuth approve page an OAuth client sends
 * the account holder to (`/dashboard/authorize?client_id=…`). Both sit in `/dashboard/`, so the
 * page's relative asset URLs (`./assets/…`) resolve alike.
 */
const APP_PAGES = new Set(['', 'authorize']);

/**
 * `GET`/`HEAD` `/dashboard/…` from the built files in memory, answered before the gateway sees the
 * request. Returns a node:http listener that answers and returns true for `/dashboard` and every
 * path below it, and returns false for any other path. Files are looked up by exact path in the
 * map of built files, so no request reaches the file system.
 */
export function createDashboardEndpoint(
  assets: DashboardAssets,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  const index = assets.get('index.html');
  if (!index) throw new Error('The dashboard build has no index.html.');
  return (req, res) => {
    const path = requestPath(req.url);
    if (path !== DASHBOARD_PATH && !path.startsWith(`${DASHBOARD_PATH}/`)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      const message = `No route for ${req.method} ${path} (allowed: GET, HEAD).`;
      sendError(res, new GatewayError('not_found', message), SECURITY_HEADERS);
      return true;
    }
    if (path === DASHBOARD_PATH) {
      // Relative asset URLs need the trailing slash; the query (an OAuth request) goes along.
      const query = req.url?.slice(path.length) ?? '';
      res.writeHead(308, { ...SECURITY_HEADERS, Location: `${DASHBOARD_PATH}/${query}` });
      res.end();
      return true;
    }
    const name = path.slice(DASHBOARD_PATH.length + 1);
    const asset = APP_PAGES.has(name) ? index : assets.get(name);
    if (!asset) {
      sendError(res, new GatewayError('not_found', `No dashboard file ${path}.`), SECURITY_HEADERS);
      return true;
    }
    sendAsset(req, res, asset);
    return true;
  };
}

function sendAsset(req: IncomingMessage, res: ServerResponse, asset: DashboardAsset): void {
  const headers: Record<string, string | number> = {
    ...SECURITY_HEADERS,
    'Content-Type': asset.contentType,
    'Cache-Control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    ETag: asset.etag,
  };
  if (asset.gzip) headers.Vary = 'Accept-Encoding';
  if (req.headers['if-none-match'] === asset.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const gzip = asset.gzip !== null && acceptsGzip(req.headers['accept-encoding']);
  const body = gzip ? asset.gzip! : asset.body;
  if (gzip) headers['Content-Encoding'] = 'gzip';
  headers['Content-Length'] = body.length;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** Whether `Accept-Encoding` admits gzip (any `q` above 0). */
function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  return header.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}
