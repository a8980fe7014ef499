import { z } from 'zod';
import type { HttpClient } from '../../providers/http-client.js';
import { openAIDialect } from '../../providers/openai/openai-dialect.js';
import { postUpstreamJson } from '../../providers/read-upstream-json.js';
import type { UpstreamChannel } from '../../providers/send-upstream.js';
import { reportedCostMicros } from './search-cost.js';
import type { WebSearchCapability } from './search-types.js';

/** Exa's `/search` answer, checked as far as it is read. */
const exaAnswerSchema = z.looseObject({
  results: z.array(
    z.looseObject({
      url: z.string().min(1),
      title: z.string().nullish(),
      text: z.string().nullish(),
    }),
  ),
  costDollars: z.looseObject({ total: z.unknown().optional() }).nullish(),
});

/**
 * The `web-search` wire format (Exa's API): `POST {baseUrl}/search` with `x-api-key: <key>` and
 * `{query, numResults}`, answered `{results: [{title, url, text}], costDollars?: {total}}`. The
 * backend's error bodies are read like an OpenAI-style server's. The query and the results are
 * request content: they are never logged (failure messages name the provider and status only).
 */
export function createWebSearchProvider(
  http: HttpClient,
  options: { now?: () => number } = {},
): { webSearch: WebSearchCapability } {
  const channel: UpstreamChannel = { http, dialect: openAIDialect, now: options.now ?? Date.now };
  return {
    webSearch: {
      async search(provider, request, call) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (provider.apiKey !== null) headers['x-api-key'] = provider.apiKey;
        for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
        const { data } = await postUpstreamJson(
          channel,
          { provider, url: `${provider.baseUrl}/search`, headers, body: request },
          exaAnswerSchema,
          call,
        );
        return {
          results: data.results.slice(0, request.numResults).map((r) => ({
            title: r.title ?? r.url,
            url: r.url,
            text: r.text ?? '',
          })),
          reportedCostMicros: reportedCostMicros(data.costDollars?.total),
        };
      },
    },
  };
}
