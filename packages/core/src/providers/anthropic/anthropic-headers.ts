import type { CatalogueProvider } from '../../catalogue/catalogue.js';

/** The `anthropic-version` sent when the caller names none. */
export const ANTHROPIC_VERSION = '2023-06-01';

/** Headers for one provider: its configured `headers` are added last, so they may override ours. */
export function anthropicHeaders(provider: CatalogueProvider): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
  };
  if (provider.apiKey !== null) headers['x-api-key'] = provider.apiKey;
  for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
