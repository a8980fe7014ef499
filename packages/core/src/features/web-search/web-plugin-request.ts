import type { Catalogue, CatalogueProvider } from '../../catalogue/catalogue.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { Micros } from '../../storage/types.js';
import { searchResultsTokenBound } from './search-results-message.js';
import { DEFAULT_PRICE_PER_SEARCH_MICROS } from './web-search-schema.js';

/** `max_results` when the `web` plugin gives none. */
const DEFAULT_MAX_RESULTS = 5;
const MAX_RESULTS_LIMIT = 10;
const ONLINE_SUFFIX = ':online';

/** The `web` plugin as the request asked for it, planned on its backend. */
export interface WebSearchPlan {
  maxResults: number;
  /** Replaces the default text that introduces the results; `null` = the default. */
  searchPrompt: string | null;
  /** The last user message's text: what is searched for. Content: never logged or stored. */
  query: string;
  /** The first usable `web-search` provider in config order. */
  backend: CatalogueProvider;
  /** Its `price_per_search` (default 0.007 USD): held by the pre-flight and charged per search. */
  priceMicros: Micros;
  /** The most prompt tokens the results can add (held by the pre-flight at the highest prompt price). */
  resultsTokens: number;
}

type Body = { model: string; [field: string]: unknown };

/** The `web` plugin as the request asked for it, before it is planned on a backend. */
export type WebPluginAsked = Omit<WebSearchPlan, 'backend' | 'priceMicros' | 'resultsTokens'>;

/**
 * Reads the `web` plugin of a chat request — `plugins: [{id: "web", max_results?, search_prompt?}]`
 * or the model suffix `:online` (`x/y:online`, also `x/y:online:free` = `x/y:free` with the plugin) —
 * and returns the body without it (no `plugins`, the suffix dropped), or `null` when the request
 * asks for no plugin. Refusals: a malformed `plugins` entry, `max_results` outside 1–10, or no user
 * text to search for → `400 invalid_request`; a plugin id other than `web` →
 * `503 plugin_unavailable` (spec rule 3: a requested plugin that cannot run is refused, never
 * skipped).
 */
export function readWebPlugin<B extends Body>(
  body: B,
  catalogue: Catalogue,
): { body: B; plugin: WebPluginAsked } | null {
  const online = onlineModel(body.model, catalogue);
  const asked = readPluginsField(body.plugins);
  if (!asked && online === null) return null;
  const { plugins: _plugins, ...rest } = body;
  const stripped = { ...rest, model: online ?? body.model } as B;
  return {
    body: stripped,
    plugin: {
      maxResults: asked?.maxResults ?? DEFAULT_MAX_RESULTS,
      searchPrompt: asked?.searchPrompt ?? null,
      query: lastUserText(body.messages),
    },
  };
}

/**
 * The backend a planned search uses: the first `web-search` provider, in config order, that has a
 * key. None → `503 plugin_unavailable` (before anything is held).
 */
export function planWebSearch(plugin: WebPluginAsked, catalogue: Catalogue): WebSearchPlan {
  for (const provider of catalogue.providers.values()) {
    if (provider.format !== 'web-search' || provider.apiKey === null) continue;
    return {
      ...plugin,
      backend: provider,
      priceMicros: provider.pricePerSearchMicros ?? DEFAULT_PRICE_PER_SEARCH_MICROS,
      resultsTokens: searchResultsTokenBound(plugin.maxResults, plugin.searchPrompt),
    };
  }
  throw new GatewayError(
    'plugin_unavailable',
    'The web plugin cannot run: this deployment has no usable web-search backend. Nothing was charged.',
  );
}

/** The model id without `:online` when it carries the suffix and is not itself a catalogue id. */
function onlineModel(model: string, catalogue: Catalogue): string | null {
  if (catalogue.model(model)) return null;
  if (model.endsWith(ONLINE_SUFFIX)) return model.slice(0, -ONLINE_SUFFIX.length);
  if (model.endsWith(`${ONLINE_SUFFIX}:free`))
    return `${model.slice(0, -`${ONLINE_SUFFIX}:free`.length)}:free`;
  return null;
}

function readPluginsField(value: unknown): { maxResults: number; searchPrompt: string | null } | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw invalid('plugins', 'must be an array of {id, ...} objects');
  let web: { maxResults: number; searchPrompt: string | null } | null = null;
  value.forEach((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw invalid(`plugins[${i}]`, 'must be an object with an "id"');
    }
    const { id, max_results: max, search_prompt: prompt } = entry as Record<string, unknown>;
    if (typeof id !== 'string' || id.length === 0) throw invalid(`plugins[${i}].id`, 'must be a string');
    if (id !== 'web') {
      throw new GatewayError(
        'plugin_unavailable',
        `The plugin "${id.slice(0, 64)}" is not available on this gateway (only "web" is). Nothing was charged.`,
      );
    }
    if (web) throw invalid(`plugins[${i}]`, 'the "web" plugin is given twice');
    if (max !== undefined && max !== null) {
      if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_RESULTS_LIMIT) {
        throw invalid(`plugins[${i}].max_results`, `must be a whole number from 1 to ${MAX_RESULTS_LIMIT}`);
      }
    }
    if (prompt !== undefined && prompt !== null && typeof prompt !== 'string') {
      throw invalid(`plugins[${i}].search_prompt`, 'must be a string');
    }
    web = {
      maxResults: typeof max === 'number' ? max : DEFAULT_MAX_RESULTS,
      searchPrompt: typeof prompt === 'string' && prompt.length > 0 ? prompt : null,
    };
  });
  return web;
}

/** The text of the last `user` message (its text parts joined); none → `400 invalid_request`. */
function lastUserText(messages: unknown): string {
  const list = Array.isArray(messages) ? (messages as { role?: unknown; content?: unknown }[]) : [];
  for (let i = list.length - 1; i >= 0; i--) {
    if (list[i]?.role !== 'user') continue;
    const text = messageText(list[i]!.content).trim();
    if (text.length > 0) return text;
    break;
  }
  throw invalid('messages', 'the web plugin searches for the last user message, which has no text');
}

/** A message content's text: the string, or its `text` parts joined by newlines. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is { type: 'text'; text: string } => p?.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text)
    .join('\n');
}

function invalid(field: string, message: string): GatewayError {
  return new GatewayError('invalid_request', `Invalid "${field}": ${message}.`);
}
