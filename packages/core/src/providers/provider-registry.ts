import type { CatalogueProvider } from '../catalogue/catalogue.js';
import { createAnthropicProvider } from './anthropic/anthropic-provider.js';
import { createCohereProvider } from './cohere/cohere-provider.js';
import { createDemoProvider } from './demo/demo-provider.js';
import type { HttpClient } from './http-client.js';
import { createOpenAIProvider } from './openai/openai-provider.js';
import type { ProviderAdapter } from './provider-adapter.js';

/** The adapter of each wire format, all on one HTTP client. */
export type ProviderRegistry = (provider: CatalogueProvider) => ProviderAdapter;

/**
 * Builds one adapter per wire format, sharing `http` (and so its connection pool); `demo` never
 * uses it. What each serves: `openai` chat, embeddings, images, rerank and (for providers with
 * `responses: true`) the Responses API natively; `demo` chat, embeddings, images and rerank;
 * `anthropic` chat and the Messages API passed through (`messages`); `cohere` rerank.
 */
export function createProviderRegistry(http: HttpClient, now: () => number): ProviderRegistry {
  const byFormat: Record<CatalogueProvider['format'], ProviderAdapter> = {
    openai: createOpenAIProvider(http, { now }),
    anthropic: createAnthropicProvider(http, { now }),
    cohere: createCohereProvider(http, { now }),
    demo: createDemoProvider({ now }),
    // The web plugin's search backend (features/web-search calls it): no model capability, so never a model route.
    'web-search': {},
  };
  return (provider) => byFormat[provider.format];
}
