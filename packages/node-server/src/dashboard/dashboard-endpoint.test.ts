import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningServer, startServer } from '../server.js';
import { loadDashboardAssets } from './dashboard-assets.js';
import { DASHBOARD_CSP } from './dashboard-endpoint.js';

const INDEX = `<!doctype html><html><head><script type="module" src="./assets/index-abc123.js"></script></head><body>${'<div></div>'.repeat(50)}</body></html>`;
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;

let dir: string;
let server: RunningServer;
const gatewayPaths: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-dashboard-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), SCRIPT);
  writeFileSync(join(dir, 'assets', 'notes.md'), 'not a served type');
  const gateway = {
    fetch: async (request: Request) => {
      gatewayPaths.push(new URL(request.url).pathname);
      return new Response('from the gateway');
    },
  };
  server = await startServer({ gateway, port: 0, host: '127.0.0.1', dashboard: loadDashboardAssets(dir) });
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A raw request (node:http sends the path exactly as given; fetch would normalise `..`). */
function get(path: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port: server.port, path, method, headers };
    const req = httpRequest(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the dashboard endpoint', () => {
  it('redirects /dashboard to /dashboard/, keeping the query (an OAuth request)', async () => {
    const res = await get('/dashboard?client_id=c1&state=s');
    expect(res.status).toBe(308);
    expect(res.headers.location).toBe('/dashboard/?client_id=c1&state=s');
  });

  it('serves the app at /dashboard/ with a strict CSP and revalidation', async () => {
    const res = await get('/dashboard/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body.toString()).toBe(INDEX);
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(DASHBOARD_CSP).toContain("default-src 'none'");
    expect(DASHBOARD_CSP).not.toContain('unsafe');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-cache');
  });

  it('serves the same page at /dashboard/authorize (the OAuth approve page)', async () => {
    const res = await get('/dashboard/authorize?client_id=c1&redirect_uri=https%3A%2F%2Fapp.example%2Fcb');
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(INDEX);
  });

  it('serves hashed assets for good, gzipped when asked, 304 on a matching ETag', async () => {
    const plain = await get('/dashboard/assets/index-abc123.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(SCRIPT);

    const gzipped = await get('/dashboard/assets/index-abc123.js', { 'accept-encoding': 'br, gzip;q=0.8' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.headers.vary).toBe('Accept-Encoding');
    expect(gunzipSync(gzipped.body).toString()).toBe(SCRIPT);
    expect(gzipped.body.length).toBeLessThan(SCRIPT.length);

    const refused = await get('/dashboard/assets/index-abc123.js', { 'accept-encoding': 'gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();

    const cached = await get('/dashboard/assets/index-abc123.js', {
      'if-none-match': String(plain.headers.etag),
    });
    expect(cached.status).toBe(304);
    expect(cached.body.length).toBe(0);
  });

  it('answers HEAD without a body', async () => {
    const res = await get('/dashboard/', {}, 'HEAD');
    expect(res.status).toBe(200);
    expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(INDEX));
    expect(res.body.length).toBe(0);
  });

  it.each([
    '/dashboard/assets/../index.html',
    '/dashboard/%2e%2e/package.json',
    '/dashboard/..%2f..%2fpackage.json',
    '/dashboard/assets/notes.md',
    '/dashboard/nope',
  ])('%s is a 404 envelope, never a file outside the build', async (path) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString()).error.code).toBe('not_found');
    expect(res.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(res.headers['x-gateway-request-id']).toMatch(/^req_/);
  });

  it('refuses other methods with the envelope', async () => {
    const res = await get('/dashboard/', {}, 'POST');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.body.toString()).error.message).toContain('allowed: GET, HEAD');
  });

  it('leaves every other path to the gateway', async () => {
    const res = await get('/dashboards');
    expect(res.body.toString()).toBe('from the gateway');
    await get('/v1/key');
    expect(gatewayPaths).toEqual(['/dashboards', '/v1/key']);
  });
});

describe('loadDashboardAssets', () => {
  it('is null for a folder without a build, or none', () => {
    expect(loadDashboardAssets(null)).toBeNull();
    expect(loadDashboardAssets(join(tmpdir(), 'tollgate-no-such-dashboard'))).toBeNull();
  });

  it('keeps only the served types, keyed by their path below /dashboard/', () => {
    expect([...loadDashboardAssets(dir)!.keys()].sort()).toEqual(['assets/index-abc123.js', 'index.html']);
  });
});
