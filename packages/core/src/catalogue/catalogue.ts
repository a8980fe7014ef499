import type { Micros } from '../storage/types.js';
import {
  DEFAULT_IMAGE_INPUT_TOKENS,
  type GatewayConfig,
  type ModelType,
  type ProviderFormat,
} from './config-schema.js';

/**
 * Prices of one route in integer micro-dollars: token prices per million tokens, `image` per image,
 * `search` per search unit. A price the config leaves out is 0 (the model's type does not use it).
 */
export interface RoutePricing {
  prompt: Micros;
  completion: Micros;
  /** Rate for prompt tokens served from the provider's cache; `null` = charged at `prompt`. */
  cachedPrompt: Micros | null;
  /** Rate for prompt tokens written to the provider's cache; `null` = charged at `prompt`. */
  cacheWrite: Micros | null;
  image: Micros;
  search: Micros;
}

export interface CatalogueProvider {
  id: string;
  format: ProviderFormat;
  /** Without a trailing slash; `''` for the in-process `demo` format. */
  baseUrl: string;
  /**
   * The resolved upstream key; `null` when neither `api_key` nor the `api_key_env` variable gives one
   * (always `null` for `demo`, which needs none).
   */
  apiKey: string | null;
  headers: Record<string, string>;
  /** Per-attempt time to first byte; `null` = the gateway default. */
  timeoutMs: number | null;
  /** Longest silence between two reads of a streamed answer before it counts as failed. */
  streamIdleTimeoutMs: number;
  /** A `web-search` backend's `price_per_search`, when the config gives one. */
  pricePerSearchMicros?: Micros;
  /**
   * The chat field an `openai`-format upstream takes the output ceiling in (config
   * `max_tokens_field`; absent: `max_tokens`).
   */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens';
  /** An `openai`-format upstream that serves `/responses` itself (config `responses: true`). */
  responses?: boolean;
}

/** `stream_idle_timeout_ms` when a provider does not set it. */
const DEFAULT_STREAM_IDLE_TIMEOUT_MS = 60_000;

export interface CatalogueEndpoint {
  provider: CatalogueProvider;
  upstreamModel: string;
  pricing: RoutePricing;
  /** A route is usable when its provider has a key or is the `demo` provider. */
  usable: boolean;
}

export interface CatalogueModel {
  id: string;
  name: string;
  type: ModelType;
  contextLength: number | null;
  /** The completion ceiling of a chat model; `null` for the other types. */
  maxOutputTokens: number | null;
  /** Prompt tokens one image part is held at (config `image_input_tokens`, else the default). */
  imageInputTokens: number;
  capabilities: { tools: boolean };
  /** In default try order. */
  endpoints: CatalogueEndpoint[];
}

/** The providers and models a gateway serves, resolved from the config file and the environment. */
export interface Catalogue {
  providers: ReadonlyMap<string, CatalogueProvider>;
  models: readonly CatalogueModel[];
  /** The model with this id, or `undefined`. */
  model(id: string): CatalogueModel | undefined;
}

/**
 * Resolves a validated config into a catalogue: provider keys come from `api_key` or from the
 * environment variable named by `api_key_env` (looked up in `env`, never in a global).
 */
export function buildCatalogue(
  config: Pick<GatewayConfig, 'providers' | 'models'>,
  env: Record<string, string | undefined> = {},
): Catalogue {
  const providers = new Map<string, CatalogueProvider>();
  for (const [id, p] of Object.entries(config.providers)) {
    if (p.format === 'demo') {
      providers.set(id, {
        id,
        format: p.format,
        baseUrl: '',
        apiKey: null,
        headers: {},
        timeoutMs: null,
        streamIdleTimeoutMs: DEFAULT_STREAM_IDLE_TIMEOUT_MS,
      });
      continue;
    }
    const apiKey = p.api_key ?? (p.api_key_env ? env[p.api_key_env] || null : null);
    providers.set(id, {
      id,
      format: p.format,
      baseUrl: p.base_url.replace(/\/+$/, ''),
      apiKey,
      headers: p.headers ?? {},
      timeoutMs: p.timeout_ms ?? null,
      streamIdleTimeoutMs:
        ('stream_idle_timeout_ms' in p ? p.stream_idle_timeout_ms : undefined) ??
        DEFAULT_STREAM_IDLE_TIMEOUT_MS,
      ...('max_tokens_field' in p && p.max_tokens_field && { maxTokensField: p.max_tokens_field }),
      ...('responses' in p && p.responses === true && { responses: true }),
      ...(p.format === 'web-search' &&
        p.price_per_search !== undefined && { pricePerSearchMicros: p.price_per_search }),
    });
  }
  const models: CatalogueModel[] = config.models.map((m) => ({
    id: m.id,
    name: m.name ?? m.id,
    type: m.type,
    contextLength: m.context_length ?? null,
    maxOutputTokens: m.max_output_tokens ?? null,
    imageInputTokens: m.image_input_tokens ?? DEFAULT_IMAGE_INPUT_TOKENS,
    capabilities: { tools: m.capabilities.tools },
    endpoints: m.endpoints.map((e) => {
      const provider = providers.get(e.provider);
      if (!provider) throw new Error(`model ${m.id}: unknown provider ${e.provider}`);
      return {
        provider,
        upstreamModel: e.upstream_model,
        pricing: {
          prompt: e.pricing.prompt ?? 0,
          completion: e.pricing.completion ?? 0,
          cachedPrompt: e.pricing.cached_prompt ?? null,
          cacheWrite: e.pricing.cache_write ?? null,
          image: e.pricing.image ?? 0,
          search: e.pricing.search ?? 0,
        },
        usable: provider.apiKey !== null || provider.format === 'demo',
      };
    }),
  }));
  const byId = new Map(models.map((m) => [m.id, m]));
  return { providers, models, model: (id) => byId.get(id) };
}
