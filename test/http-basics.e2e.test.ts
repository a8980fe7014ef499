import { connect } from 'node:net';
import { apiRoutes } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { call, expectError, headerTokens, REQUEST_ID } from './helpers/http.js';
import { describeOnEachStorage } from './helpers/test-gateway.js';

const ALLOWED_HEADERS = [
  'authorization',
  'content-type',
  'idempotency-key',
  'http-referer',
  'x-title',
  // The Anthropic wire's key and version headers.
  'x-api-key',
  'anthropic-version',
  'anthropic-beta',
];

/** A 1 KiB body cap for the 413 tests. */
const SMALL_CAP = 1024;

describeOnEachStorage('HTTP basics', (gw) => {
  describe('X-Gateway-Request-Id', () => {
    it('is on every response (success, failure, 404, preflight, /healthz, /api/openapi.json) and unique per request', async () => {
      const { inferenceKey } = await gw().newTenant();
      const responses = await Promise.all([
        call(gw().url, '/v1/models'),
        call(gw().url, '/v1/key', { key: inferenceKey }),
        call(gw().url, '/v1/key'),
        call(gw().url, '/v1/no-such-route'),
        call(gw().url, '/no-such-route'),
        call(gw().url, '/v1/chat/completions', {
          method: 'OPTIONS',
          headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
        }),
        call(gw().url, '/healthz'),
        call(gw().url, '/api/openapi.json'),
        call(gw().url, '/healthz'),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 200, 401, 404, 404, 204, 200, 200, 200]);
      const ids = responses.map((r) => r.headers.get('x-gateway-request-id'));
      for (const id of ids) expect(id).toMatch(REQUEST_ID);
      expect(new Set(ids).size).toBe(ids.length);
    });
  });

  describe('requests node:http refuses before the gateway sees them', () => {
    it('an oversized request header (431) still carries X-Gateway-Request-Id and the error envelope', async () => {
      const { inferenceKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/key', {
        key: inferenceKey,
        headers: { 'X-Padding': 'x'.repeat(32 * 1024) },
      });
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.headers.get('x-gateway-request-id') ?? '(none)').toMatch(REQUEST_ID);
      expect(response.body?.error?.request_id).toBe(response.headers.get('x-gateway-request-id'));
    });

    it('a malformed HTTP request (400) still carries X-Gateway-Request-Id', async () => {
      const { port } = new URL(gw().url);
      const raw = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), '127.0.0.1', () => {
          socket.write('GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nNot A Header\r\n\r\n');
        });
        let received = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          received += chunk;
        });
        socket.on('close', () => resolve(received));
        socket.on('error', reject);
      });
      expect(raw).toMatch(/^HTTP\/1\.1 4\d\d /);
      expect(raw).toMatch(/\r\nx-gateway-request-id: req_[0-9a-z]+\r\n/i);
    });
  });

  describe('unknown paths', () => {
    it.each(['/v1/no-such-route', '/v1/keys/a/b', '/nope', '/v2/models'])(
      'GET %s → 404 not_found envelope',
      async (path) => {
        expectError(await call(gw().url, path), 404, 'not_found');
      },
    );
  });

  describe('CORS', () => {
    it.each(['/v1/chat/completions', '/v1/keys/x'])(
      'OPTIONS preflight on %s → 204 naming methods, the allowed headers and the exposed request id',
      async (path) => {
        const response = await call(gw().url, path, {
          method: 'OPTIONS',
          headers: {
            Origin: 'https://app.example',
            'Access-Control-Request-Method': path.includes('keys') ? 'PATCH' : 'POST',
            'Access-Control-Request-Headers': 'authorization, content-type, idempotency-key',
          },
        });
        expect(response.status).toBe(204);
        expect(response.text).toBe('');
        expect(response.headers.get('access-control-allow-origin')).toBeTruthy();
        const methods = headerTokens(response.headers, 'access-control-allow-methods');
        expect(methods).toEqual(expect.arrayContaining(['get', 'post', 'patch', 'delete']));
        const allowed = headerTokens(response.headers, 'access-control-allow-headers');
        expect(allowed).toEqual(expect.arrayContaining(ALLOWED_HEADERS));
        expect(allowed).not.toContain('*');
        expect(headerTokens(response.headers, 'access-control-expose-headers')).toContain(
          'x-gateway-request-id',
        );
        expect(response.headers.get('x-gateway-request-id')).toMatch(REQUEST_ID);
      },
    );

    it('ordinary /v1 responses carry CORS headers, on success and on failure', async () => {
      const { inferenceKey } = await gw().newTenant();
      const responses = await Promise.all([
        call(gw().url, '/v1/models', { headers: { Origin: 'https://app.example' } }),
        call(gw().url, '/v1/key', { key: inferenceKey, headers: { Origin: 'https://app.example' } }),
        call(gw().url, '/v1/key', { headers: { Origin: 'https://app.example' } }),
        call(gw().url, '/v1/models/none/such/endpoints', {
          key: inferenceKey,
          headers: { Origin: 'https://app.example' },
        }),
      ]);
      expect(responses.map((r) => r.status)).toEqual([200, 200, 401, 404]);
      for (const response of responses) {
        expect(response.headers.get('access-control-allow-origin')).toBe('*');
        expect(headerTokens(response.headers, 'access-control-expose-headers')).toContain(
          'x-gateway-request-id',
        );
      }
    });
  });

  describe('system endpoints', () => {
    it('/healthz → 200 {status: "ok"}', async () => {
      const response = await call(gw().url, '/healthz');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ status: 'ok' });
    });

    it('/api/openapi.json is public, OpenAPI 3.1.0, and lists every route of apiRoutes', async () => {
      const response = await call(gw().url, '/api/openapi.json');
      expect(response.status).toBe(200);
      expect(response.body.openapi).toBe('3.1.0');
      const listed = Object.entries(response.body.paths as Record<string, Record<string, unknown>>).flatMap(
        ([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      );
      const routes = apiRoutes.map((route) => `${route.method} ${route.path}`);
      expect(routes.length).toBeGreaterThan(0);
      expect(listed).toEqual(expect.arrayContaining(routes));
      expect(listed).toEqual(expect.arrayContaining(['GET /healthz', 'GET /api/openapi.json']));
    });

    it('/api/openapi.json marks key-protected operations with bearer security and public ones without', async () => {
      const { body } = await call(gw().url, '/api/openapi.json');
      expect(body.paths['/v1/models'].get.security).toEqual([]);
      expect(body.paths['/v1/key'].get.security).toEqual([{ bearerAuth: [] }]);
      expect(body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    });
  });

  describe('request bodies', () => {
    it('malformed JSON → 400 invalid_request', async () => {
      const { provisioningKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/keys', {
        method: 'POST',
        key: provisioningKey,
        body: '{"name": "x",',
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(response, 400, 'invalid_request');
    });

    it('an empty body where one is required → 400 invalid_request', async () => {
      const { provisioningKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/keys', { method: 'POST', key: provisioningKey, body: '' });
      expectError(response, 400, 'invalid_request');
    });

    it('a JSON body that is not an object → 400 invalid_request', async () => {
      const { provisioningKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/keys', {
        method: 'POST',
        key: provisioningKey,
        json: ['x'],
      });
      expectError(response, 400, 'invalid_request');
    });
  });

  describe('GET /v1/models', () => {
    it('is public and lists capabilities.tools and per-million prices as strings', async () => {
      const response = await call(gw().url, '/v1/models');
      expect(response.status).toBe(200);
      const ids = response.body.data.map((m: { id: string }) => m.id);
      expect(ids).toEqual(['acme/fast', 'other/keyless']);
      const fast = response.body.data[0];
      expect(fast.capabilities).toEqual({ tools: true });
      expect(fast.pricing).toEqual({ prompt: '0.15', completion: '0.6', cached_prompt: '0.075' });
      const keyless = response.body.data[1];
      expect(keyless.capabilities).toEqual({ tools: false });
      expect(keyless.pricing).toEqual({ prompt: '3', completion: '15' });
    });

    it('tells a model with a keyed provider from one without', async () => {
      const response = await call(gw().url, '/v1/models');
      expect(response.body.data.map((m: { available: boolean }) => m.available)).toEqual([true, false]);
    });
  });

  describe('GET /v1/models/{vendor}/{model}/endpoints', () => {
    it('needs a key: without one → 401 unauthenticated', async () => {
      expectError(await call(gw().url, '/v1/models/acme/fast/endpoints'), 401, 'unauthenticated');
    });

    it('lists the providers in config order with prices, for a key of either scope', async () => {
      const { inferenceKey, provisioningKey } = await gw().newTenant();
      for (const key of [inferenceKey, provisioningKey]) {
        const response = await call(gw().url, '/v1/models/acme/fast/endpoints', { key });
        expect(response.status).toBe(200);
        expect(response.body.data.id).toBe('acme/fast');
        expect(response.body.data.endpoints).toEqual([
          expect.objectContaining({
            provider: 'keyed',
            available: true,
            pricing: { prompt: '0.15', completion: '0.6', cached_prompt: '0.075' },
          }),
          expect.objectContaining({
            provider: 'keyless',
            available: false,
            pricing: { prompt: '0.2', completion: '0.8' },
          }),
        ]);
      }
    });

    it('an unknown model → 404 model_not_found', async () => {
      const { inferenceKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/models/acme/no-such-model/endpoints', { key: inferenceKey });
      expectError(response, 404, 'model_not_found');
    });
  });
});

describeOnEachStorage(
  'request size cap (maxBodyBytes = 1 KiB)',
  (gw) => {
    const bigBody = JSON.stringify({ name: 'x'.repeat(4 * SMALL_CAP) });

    /** The two "<n> MB" figures of a 413 message, as numbers. */
    const statedMegabytes = (message: string) =>
      [...message.matchAll(/(\d+(?:\.\d+)?)\s*MB/g)].map((match) => Number(match[1]));

    it('a body over the cap (Content-Length declared) → 413 payload_too_large stating both sizes in MB', async () => {
      const { provisioningKey, account } = await gw().newTenant();
      const response = await call(gw().url, '/v1/keys', {
        method: 'POST',
        key: provisioningKey,
        body: bigBody,
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(response, 413, 'payload_too_large');
      expect(statedMegabytes(response.body.error.message)).toHaveLength(2);
      // Nothing was minted.
      expect(await gw().storage.listApiKeys(account.id)).toHaveLength(2);
    });

    it('a streamed (chunked) body over the cap → 413 payload_too_large stating both sizes in MB', async () => {
      const { provisioningKey, account } = await gw().newTenant();
      const bytes = new TextEncoder().encode(bigBody);
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < bytes.length; i += 512) controller.enqueue(bytes.slice(i, i + 512));
          controller.close();
        },
      });
      const response = await call(gw().url, '/v1/keys', {
        method: 'POST',
        key: provisioningKey,
        body: stream,
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(response, 413, 'payload_too_large');
      expect(statedMegabytes(response.body.error.message)).toHaveLength(2);
      // Nothing was minted.
      expect(await gw().storage.listApiKeys(account.id)).toHaveLength(2);
    });

    it('the 413 message gives figures a caller can act on: the body size is stated larger than the cap', async () => {
      // 4 KiB against a 1 KiB cap. Rounded to two decimals both read "0.00 MB", which tells
      // the caller neither size.
      const { provisioningKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/keys', {
        method: 'POST',
        key: provisioningKey,
        body: bigBody,
        headers: { 'Content-Type': 'application/json' },
      });
      expectError(response, 413, 'payload_too_large');
      const [body, cap] = statedMegabytes(response.body.error.message);
      expect(cap, response.body.error.message).toBeGreaterThan(0);
      expect(body, response.body.error.message).toBeGreaterThan(cap!);
    });

    it('a body of exactly the cap is accepted; one byte more → 413', async () => {
      const { provisioningKey, account } = await gw().newTenant();
      const padded = (size: number) => {
        const json = '{"name":"edge"}';
        return json.slice(0, -1) + ' '.repeat(size - json.length) + json.slice(-1);
      };
      const post = (body: string) =>
        call(gw().url, '/v1/keys', {
          method: 'POST',
          key: provisioningKey,
          body,
          headers: { 'Content-Type': 'application/json' },
        });
      expect(new TextEncoder().encode(padded(SMALL_CAP)).byteLength).toBe(SMALL_CAP);
      expect((await post(padded(SMALL_CAP))).status).toBe(201);
      expectError(await post(padded(SMALL_CAP + 1)), 413, 'payload_too_large');
      expect(await gw().storage.listApiKeys(account.id)).toHaveLength(3);
    });

    it('a body under the cap is accepted', async () => {
      const { provisioningKey } = await gw().newTenant();
      const response = await call(gw().url, '/v1/keys', { key: provisioningKey, json: { name: 'small' } });
      expect(response.status).toBe(201);
    });
  },
  { maxBodyBytes: SMALL_CAP },
);
