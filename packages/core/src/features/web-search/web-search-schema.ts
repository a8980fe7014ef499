import { z } from 'zod';
import { usdMicrosSchema } from '../../money/usd-schema.js';

/** `price_per_search` when a `web-search` provider gives none (spec Cost rule 6: 0.007 USD). */
export const DEFAULT_PRICE_PER_SEARCH_MICROS = 7_000;

/**
 * A `web-search` provider in the config: the search backend of the `web` plugin (Exa's `/search`
 * API), never a model route. `price_per_search` is decimal USD, parsed exactly into micros.
 */
export const webSearchProviderSchema = z
  .object({
    format: z.literal('web-search'),
    base_url: z.url(),
    api_key: z.string().min(1).optional(),
    api_key_env: z.string().min(1).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    /** How long one search may take (default 10 000 ms); then the plugin is unavailable. */
    timeout_ms: z.int().positive().optional(),
    price_per_search: usdMicrosSchema({ positive: false, allowString: true }).optional(),
  })
  .strict();
