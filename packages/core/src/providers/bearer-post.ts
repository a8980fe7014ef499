import type { CatalogueProvider } from '../catalogue/catalogue.js';
import type { UpstreamPost } from './send-upstream.js';

/** A JSON POST to `{baseUrl}{path}` of a bearer-token upstream (OpenAI-compatible servers, Cohere). */
export function bearerPost(provider: CatalogueProvider, path: string, body: unknown): UpstreamPost {
  return { provider, url: `${provider.baseUrl}${path}`, headers: bearerHeaders(provider), body };
}

/**
 * `authorization: Bearer <key>` when the provider has a key, then the provider's own headers.
 * Provider headers win over ours; names are lower-cased so an `Authorization` replaces ours, not
 * joins it.
 */
function bearerHeaders(provider: CatalogueProvider): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (provider.apiKey !== null) headers.authorization = `Bearer ${provider.apiKey}`;
  for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
