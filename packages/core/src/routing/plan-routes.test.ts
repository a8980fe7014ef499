import { describe, expect, it } from 'vitest';
import { buildCatalogue } from '../catalogue/catalogue.js';
import { parseGatewayConfig } from '../catalogue/config-schema.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { EndpointObservation } from './endpoint-stats.js';
import { planRoutes, readRoutingPreferences } from './plan-routes.js';

const provider = (api_key?: string) => ({
  format: 'openai' as const,
  base_url: 'http://upstream.test/v1',
  ...(api_key && { api_key }),
});
const price = (prompt: string, completion: string) => ({ prompt, completion });

const catalogue = buildCatalogue(
  parseGatewayConfig({
    providers: { a: provider('k'), b: provider('k'), c: provider('k'), nokey: provider() },
    models: [
      {
        id: 'v/main',
        max_output_tokens: 100,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'a', upstream_model: 'm', pricing: price('3', '15') },
          { provider: 'nokey', upstream_model: 'm', pricing: price('0', '0') },
          { provider: 'b', upstream_model: 'm', pricing: price('1', '2') },
          { provider: 'c', upstream_model: 'm', pricing: price('2', '2') },
        ],
      },
      {
        id: 'v/backup',
        max_output_tokens: 100,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'c', upstream_model: 'backup', pricing: price('0', '0') },
          { provider: 'a', upstream_model: 'backup', pricing: price('1', '1') },
        ],
      },
      {
        id: 'v/no-tools',
        max_output_tokens: 100,
        endpoints: [{ provider: 'a', upstream_model: 'nt', pricing: price('1', '1') }],
      },
      {
        id: 'v/keyless',
        max_output_tokens: 100,
        endpoints: [{ provider: 'nokey', upstream_model: 'x', pricing: price('0', '0') }],
      },
    ],
  }),
);

const none = () => undefined;

function plan(
  body: Record<string, unknown>,
  options: { usesTools?: boolean; observe?: (k: string) => EndpointObservation | undefined } = {},
) {
  const prefs = readRoutingPreferences({ messages: [], ...body }, catalogue.providers.keys());
  const result = planRoutes(catalogue, prefs, {
    usesTools: options.usesTools ?? false,
    modelType: 'chat',
    path: '/v1/chat/completions',
    serves: () => true,
    observe: options.observe ?? none,
  });
  return result.routes.map((r) => `${r.model.id}@${r.endpoint.provider.id}`);
}

function refusal(body: Record<string, unknown>, usesTools = false): GatewayError {
  try {
    plan(body, { usesTools });
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('planRoutes', () => {
  it('lists the usable endpoints of the model in catalogue order (a route without a key is skipped)', () => {
    expect(plan({ model: 'v/main' })).toEqual(['v/main@a', 'v/main@b', 'v/main@c']);
  });

  it('appends every provider of each `models` fallback after the first model, in order', () => {
    expect(plan({ model: 'v/main', models: ['v/backup'] })).toEqual([
      'v/main@a',
      'v/main@b',
      'v/main@c',
      'v/backup@c',
      'v/backup@a',
    ]);
  });

  it('puts provider.order first, in that order, keeping the rest in catalogue order', () => {
    expect(plan({ model: 'v/main', provider: { order: ['c', 'b'] } })).toEqual([
      'v/main@c',
      'v/main@b',
      'v/main@a',
    ]);
  });

  it('drops provider.ignore and keeps only provider.only', () => {
    expect(plan({ model: 'v/main', provider: { ignore: ['a'] } })).toEqual(['v/main@b', 'v/main@c']);
    expect(plan({ model: 'v/main', provider: { only: ['c', 'a'] } })).toEqual(['v/main@a', 'v/main@c']);
  });

  it('matches provider ids case-insensitively', () => {
    expect(plan({ model: 'v/main', provider: { order: ['C'] } })[0]).toBe('v/main@c');
  });

  it('sorts by price (prompt + completion), stable for ties; the string and {by} forms agree', () => {
    expect(plan({ model: 'v/main', provider: { sort: 'price' } })).toEqual([
      'v/main@b',
      'v/main@c',
      'v/main@a',
    ]);
    expect(plan({ model: 'v/main', provider: { sort: { by: 'price' } } })).toEqual([
      'v/main@b',
      'v/main@c',
      'v/main@a',
    ]);
  });

  it('sorts by observed latency and throughput; unobserved endpoints go last in catalogue order', () => {
    const seen: Record<string, EndpointObservation> = {
      'a/m': { latencyMs: 900, tokensPerSecond: 200 },
      'c/m': { latencyMs: 100, tokensPerSecond: 50 },
    };
    const observe = (k: string) => seen[k];
    expect(plan({ model: 'v/main', provider: { sort: 'latency' } }, { observe })).toEqual([
      'v/main@c',
      'v/main@a',
      'v/main@b',
    ]);
    expect(plan({ model: 'v/main', provider: { sort: 'throughput' } }, { observe })).toEqual([
      'v/main@a',
      'v/main@c',
      'v/main@b',
    ]);
  });

  it('allow_fallbacks: false stops after the first usable route', () => {
    expect(plan({ model: 'v/main', models: ['v/backup'], provider: { allow_fallbacks: false } })).toEqual([
      'v/main@a',
    ]);
  });

  it(':free keeps only zero-price endpoints', () => {
    expect(plan({ model: 'v/backup:free' })).toEqual(['v/backup@c']);
  });

  it(':free with no zero-price route → 402 no_free_route (a keyless free route does not count)', () => {
    expect(refusal({ model: 'v/main:free' }).code).toBe('no_free_route');
  });

  it('unknown model (first or fallback) → 404 model_not_found', () => {
    expect(refusal({ model: 'v/nope' }).code).toBe('model_not_found');
    expect(refusal({ model: 'v/main', models: ['x/y'] }).code).toBe('model_not_found');
  });

  it('tools on a model without tool calling → 400 naming the model; fallbacks without tools are skipped', () => {
    const error = refusal({ model: 'v/no-tools' }, true);
    expect(error.code).toBe('invalid_request');
    expect(error.message).toMatch(/v\/no-tools.*does not support tool calling/);
    expect(plan({ model: 'v/main', models: ['v/no-tools'] }, { usesTools: true })).toHaveLength(3);
  });

  it('a model with no usable endpoint → 503 no_provider_available', () => {
    expect(refusal({ model: 'v/keyless' }).code).toBe('no_provider_available');
    expect(refusal({ model: 'v/main', provider: { only: ['nokey'] } }).code).toBe('no_provider_available');
  });

  it.each([
    [{ models: 'v/backup' }, 'body.models'],
    [{ models: [1] }, 'body.models'],
    [{ provider: 'a' }, 'body.provider'],
    [{ provider: { order: 'a' } }, 'body.provider.order'],
    [{ provider: { ignore: ['zzz'] } }, 'body.provider.ignore'],
    [{ provider: { only: [1] } }, 'body.provider.only'],
    [{ provider: { sort: 'cheapest' } }, 'body.provider.sort'],
    [{ provider: { sort: { by: 'speed' } } }, 'body.provider.sort'],
    [{ provider: { allow_fallbacks: 'no' } }, 'body.provider.allow_fallbacks'],
  ])('unusable routing value %j → 400 naming %s', (fields, field) => {
    const error = refusal({ model: 'v/main', ...fields });
    expect(error.code).toBe('invalid_request');
    expect(error.message.startsWith(`${field}:`)).toBe(true);
  });

  it('ignores routing keys it does not know (configs written for other gateways keep working)', () => {
    expect(
      plan({ model: 'v/main', provider: { data_collection: 'deny', require_parameters: true } }),
    ).toHaveLength(3);
  });
});
