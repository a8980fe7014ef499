import { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.js';
import { defineRoute, type GatewayDeps } from '../http/route.js';
import { formatMicrosAsUsd } from '../money/micros.js';
import type { CatalogueEndpoint, CatalogueModel, RoutePricing } from './catalogue.js';
import { MODEL_TYPES, type ModelType, PRICING_KEYS_USED, PROVIDER_FORMATS } from './config-schema.js';

const pricingSchema = z
  .object({
    prompt: z.string().optional(),
    completion: z.string().optional(),
    cached_prompt: z.string().optional(),
    cache_write: z.string().optional(),
    image: z.string().optional(),
    search: z.string().optional(),
  })
  .describe(
    'Exact decimal USD strings: token prices per million tokens, `image` per image, `search` per search unit; the keys the model type uses',
  )
  .meta({ id: 'Pricing' });

const modelSchema = z
  .object({
    id: z.string(),
    object: z.literal('model'),
    owned_by: z.string(),
    name: z.string(),
    type: z.enum(MODEL_TYPES),
    context_length: z.int().nullable(),
    max_output_tokens: z.int().nullable(),
    capabilities: z.object({ tools: z.boolean() }),
    pricing: pricingSchema.describe('Prices of the first route in try order'),
    available: z
      .boolean()
      .describe('At least one route has a configured provider key (or is the offline demo provider)'),
  })
  .meta({ id: 'Model' });

const endpointSchema = z.object({
  provider: z.string(),
  format: z.enum(PROVIDER_FORMATS),
  upstream_model: z.string(),
  available: z.boolean(),
  pricing: pricingSchema,
});

/** A price in USD, trimmed: 3_000_000 → "3", 150_000 → "0.15". */
function usd(micros: number): string {
  return formatMicrosAsUsd(micros).replace(/\.?0+$/, '');
}

/** The prices the model's type uses, and any other the config gave a non-zero value. */
function pricingView(p: RoutePricing, type: ModelType): z.output<typeof pricingSchema> {
  const used = PRICING_KEYS_USED[type] as readonly string[];
  const shown = (key: 'prompt' | 'completion' | 'image' | 'search') => used.includes(key) || p[key] !== 0;
  return {
    ...(shown('prompt') && { prompt: usd(p.prompt) }),
    ...(shown('completion') && { completion: usd(p.completion) }),
    ...(p.cachedPrompt !== null && { cached_prompt: usd(p.cachedPrompt) }),
    ...(p.cacheWrite !== null && { cache_write: usd(p.cacheWrite) }),
    ...(shown('image') && { image: usd(p.image) }),
    ...(shown('search') && { search: usd(p.search) }),
  };
}

function modelView(model: CatalogueModel): z.output<typeof modelSchema> {
  return {
    id: model.id,
    object: 'model',
    owned_by: model.id.split('/')[0]!,
    name: model.name,
    type: model.type,
    context_length: model.contextLength,
    max_output_tokens: model.maxOutputTokens,
    capabilities: { tools: model.capabilities.tools },
    pricing: pricingView(model.endpoints[0]!.pricing, model.type),
    available: model.endpoints.some((e) => e.usable),
  };
}

/** One catalogue row by id, or `404 model_not_found`. */
function modelResponse(id: string, deps: GatewayDeps): Response {
  const model = deps.catalogue.model(id);
  if (!model) throw new GatewayError('model_not_found', `No model "${id}" in the catalogue.`);
  return deps.jsonResponse(modelView(model));
}

function endpointView(endpoint: CatalogueEndpoint, type: ModelType): z.output<typeof endpointSchema> {
  return {
    provider: endpoint.provider.id,
    format: endpoint.provider.format,
    upstream_model: endpoint.upstreamModel,
    available: endpoint.usable,
    pricing: pricingView(endpoint.pricing, type),
  };
}

/** The public catalogue, one model of it, and, for any key, the routes of one model in try order. */
export const modelsRoutes = [
  defineRoute({
    method: 'GET',
    path: '/v1/models',
    operationId: 'listModels',
    summary: 'The model catalogue (public, no key needed)',
    tag: 'Models',
    access: 'public',
    responses: {
      200: {
        description: 'Every model',
        schema: z.object({ object: z.literal('list'), data: z.array(modelSchema) }),
      },
    },
    handle({ deps }) {
      return deps.jsonResponse({ object: 'list', data: deps.catalogue.models.map(modelView) });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/models/{vendor}/{model}',
    operationId: 'retrieveModel',
    summary: 'One model of the catalogue, as listed by GET /v1/models (public, no key needed)',
    tag: 'Models',
    access: 'public',
    responses: { 200: { description: 'The model', schema: modelSchema } },
    handle({ params, deps }) {
      return modelResponse(`${params.vendor}/${params.model}`, deps);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/models/{id}',
    operationId: 'retrieveModelByEncodedId',
    summary:
      'One model, its id as a single segment with the slash percent-encoded (`vendor%2Fmodel`), as the OpenAI SDK sends it',
    tag: 'Models',
    access: 'public',
    responses: { 200: { description: 'The model', schema: modelSchema } },
    handle({ params, deps }) {
      return modelResponse(params.id!, deps);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/v1/models/{vendor}/{model}/endpoints',
    operationId: 'listModelEndpoints',
    summary: 'The providers that serve a model, in the order they are tried, with prices',
    tag: 'Models',
    access: 'any',
    responses: {
      200: {
        description: 'The routes of the model',
        schema: z.object({
          data: z.object({ id: z.string(), name: z.string(), endpoints: z.array(endpointSchema) }),
        }),
      },
    },
    handle({ params, deps }) {
      const id = `${params.vendor}/${params.model}`;
      const model = deps.catalogue.model(id);
      if (!model) throw new GatewayError('model_not_found', `No model "${id}" in the catalogue.`);
      return deps.jsonResponse({
        data: {
          id: model.id,
          name: model.name,
          endpoints: model.endpoints.map((e) => endpointView(e, model.type)),
        },
      });
    },
  }),
];
