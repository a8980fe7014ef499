import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../catalogue/catalogue.js';
import { parseGatewayConfig } from '../catalogue/config-schema.js';
import { createGateway, type GatewayOptions } from '../gateway.js';
import type { Storage } from '../storage/types.js';
import { normalizeBasePath } from './handle-request.js';

// The routes exercised here are public: only `/healthz` reaches the storage, whose every call succeeds.
const storage = new Proxy({}, { get: () => async () => {} }) as Storage;
const catalogue = buildCatalogue(parseGatewayConfig({ providers: {}, models: [] }), {});
const silent = { info() {}, warn() {}, error() {} };

function gateway(options: GatewayOptions = {}) {
  return createGateway(storage, catalogue, { logger: silent, ...options });
}

const get = (g: ReturnType<typeof gateway>, path: string, init?: RequestInit) =>
  g.fetch(new Request(`http://gateway.test${path}`, init));

describe('basePath', () => {
  it('answers /v1, /healthz and /api/openapi.json under the base', async () => {
    const g = gateway({ basePath: '/llm' });
    const models = await get(g, '/llm/v1/models');
    expect(models.status).toBe(200);
    expect(models.headers.get('access-control-allow-origin')).toBe('*');
    // Routed (what `/healthz` reports is its own business).
    expect((await get(g, '/llm/healthz')).status).not.toBe(404);
    const doc = await get(g, '/llm/api/openapi.json?x=1');
    expect(doc.status).toBe(200);
    expect((await doc.json()).servers).toEqual([{ url: '/llm' }]);
    const preflight = await get(g, '/llm/v1/chat/completions', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(204);
  });

  it('answers 404 envelopes outside the base, and for unknown paths inside it', async () => {
    const g = gateway({ basePath: '/llm/' });
    for (const path of ['/v1/models', '/healthz', '/llmx/v1/models', '/', '/LLM/v1/models']) {
      const response = await get(g, path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
      const { error } = await response.json();
      expect(error).toMatchObject({ type: 'not_found_error', code: 'not_found' });
      expect(error.message).toContain('/llm/');
    }
    const inside = await get(g, '/llm/v1/nope');
    expect(inside.status).toBe(404);
    expect((await inside.json()).error.message).toBe('No route for GET /llm/v1/nope.');
    expect((await get(g, '/llm')).status).toBe(404);
  });

  it('keeps the root when unset', async () => {
    const g = gateway();
    expect((await get(g, '/v1/models')).status).toBe(200);
    const doc = await (await get(g, '/api/openapi.json')).json();
    expect(doc.servers).toEqual([{ url: '/' }]);
  });

  it('is normalized, and refuses what is not a plain path', () => {
    expect(normalizeBasePath(undefined)).toBe('');
    expect(normalizeBasePath('/')).toBe('');
    expect(normalizeBasePath('llm/')).toBe('/llm');
    expect(normalizeBasePath('/api/llm')).toBe('/api/llm');
    expect(normalizeBasePath('/é')).toBe('/%C3%A9');
    for (const bad of ['/a?b', '/a#b', '//a', '/a b', '/a/../b', '/./a']) {
      expect(() => normalizeBasePath(bad), bad).toThrow(TypeError);
    }
  });
});
