import type { Json } from '../helpers/inference-wire.js';
import { testConfig } from '../helpers/test-config.js';

/**
 * The catalogue the web plugin is tested on:
 * - `p1` (OpenAI format, `sk-p1`), `exa-off` (web-search, no key: never used), `exa` (web-search,
 *   key `exa-key`, the default price 0.007, searches time out after 300 ms);
 * - `acme/chat` on p1 (1 / 2 USD per M prompt / completion tokens, 100 output tokens at most);
 * - `acme/free` on p1 at price 0 (for `:free`).
 */
export const webSearchConfig = testConfig({
  providers: {
    p1: { format: 'openai', base_url: 'http://upstream.test/p1/v1', api_key: 'sk-p1' },
    'exa-off': { format: 'web-search', base_url: 'http://upstream.test/exa-off/v1', price_per_search: '1' },
    exa: {
      format: 'web-search',
      base_url: 'http://upstream.test/exa/v1',
      api_key: 'exa-key',
      timeout_ms: 300,
    },
  },
  models: [
    {
      id: 'acme/chat',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'p1', upstream_model: 'gpt-4o-mini', pricing: { prompt: '1', completion: '2' } },
      ],
    },
    {
      id: 'acme/free',
      max_output_tokens: 100,
      endpoints: [{ provider: 'p1', upstream_model: 'free-1', pricing: { prompt: '0', completion: '0' } }],
    },
  ],
});

/** `price_per_search` of `exa` (the default, 0.007 USD). */
export const DEFAULT_FEE_MICROS = 7_000;
/** The default chat reply (12 prompt, 5 completion tokens) on `acme/chat`. */
export const CHAT_TOKENS_MICROS = 12 * 1 + 5 * 2;

export const RESULTS = [
  {
    title: 'Node.js 24 released',
    url: 'https://nodejs.org/en/blog/release/v24.0.0',
    text: 'Node 24 ships V8 13.',
  },
  { title: 'What is new in Node', url: 'https://example.com/node-news', text: 'A summary of the release.' },
  { title: 'Third', url: 'https://example.org/third', text: 'Third text.' },
];

/** Exa's `/search` answer: `{requestId, results: [{id, title, url, text, ...}], costDollars?}`. */
export function exaAnswer(results = RESULTS, costUsd: number | null = 0.005): Json {
  return {
    requestId: 'b5947044c4b78efa9552a7c89b306d95',
    resolvedSearchType: 'neural',
    results: results.map((r, i) => ({
      id: r.url,
      score: 0.9 - i / 10,
      publishedDate: null,
      author: null,
      ...r,
    })),
    ...(costUsd !== null && { costDollars: { total: costUsd, search: { neural: costUsd } } }),
  };
}
