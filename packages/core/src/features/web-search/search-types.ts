import type { CatalogueProvider } from '../../catalogue/catalogue.js';
import type { Micros } from '../../storage/types.js';

/** One search result as the gateway uses it. */
export interface SearchResult {
  title: string;
  url: string;
  text: string;
}

/** What one search returned, and what the backend said it cost (`null` when it said nothing usable). */
export interface SearchAnswer {
  results: SearchResult[];
  reportedCostMicros: Micros | null;
}

/** The `web-search` format's one capability: a search. Throws `UpstreamError` when it fails. */
export interface WebSearchCapability {
  search(
    provider: CatalogueProvider,
    request: { query: string; numResults: number },
    options: { signal: AbortSignal },
  ): Promise<SearchAnswer>;
}
