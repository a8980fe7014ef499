import { describe, expect, it } from 'vitest';
import type { CatalogueProvider } from '../catalogue/catalogue.js';
import { PROVIDER_FORMATS } from '../catalogue/config-schema.js';
import { createProviderRegistry } from './provider-registry.js';

const noNetwork = { request: () => Promise.reject(new Error('no network')) };
const provider = (format: CatalogueProvider['format']): CatalogueProvider => ({
  id: format,
  format,
  baseUrl: format === 'demo' ? '' : 'https://api.example.com/v1',
  apiKey: format === 'demo' ? null : 'k',
  headers: {},
  timeoutMs: null,
  streamIdleTimeoutMs: 60_000,
});

describe('createProviderRegistry', () => {
  it('gives each wire format the capabilities it serves', () => {
    const registry = createProviderRegistry(noNetwork, Date.now);
    const served = Object.fromEntries(
      PROVIDER_FORMATS.map((format) => [format, Object.keys(registry(provider(format))).sort()]),
    );
    expect(served).toEqual({
      openai: ['chat', 'embeddings', 'images', 'rerank', 'responses'],
      anthropic: ['chat', 'messages'],
      cohere: ['rerank'],
      demo: ['chat', 'embeddings', 'images', 'rerank'],
      // Searched by features/web-search itself: no capability of a provider adapter.
      'web-search': [],
    });
  });

  it('hands every provider of one format the same adapter', () => {
    const registry = createProviderRegistry(noNetwork, Date.now);
    expect(registry({ ...provider('openai'), id: 'groq' })).toBe(registry(provider('openai')));
  });
});
