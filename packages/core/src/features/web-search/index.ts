import type { Feature } from '../../pipeline/feature.js';
import type { HttpClient } from '../../providers/http-client.js';
import { createWebSearchProvider } from './exa-search-provider.js';
import { runWebSearch, WEB_SEARCH_LINE } from './run-web-search.js';
import type { WebSearchCapability } from './search-types.js';
import {
  planWebSearch,
  readWebPlugin,
  type WebPluginAsked,
  type WebSearchPlan,
} from './web-plugin-request.js';

/** The search client of each HTTP client (one per gateway), made on first use. */
const backends = new WeakMap<HttpClient, WebSearchCapability>();

/**
 * The `web` plugin (operations that take it: chat): at stage `plan` it takes the plugin out of the
 * body (`plugins`, `:online`), plans its backend and adds its results' tokens and its fee to the
 * worst case, and keeps the call out of the cache; after the hold it searches (a failure refuses,
 * uncharged) and adds the fee as the `web_search` charge line, paid also when the model fails.
 */
export const webSearchFeature: Feature = {
  name: 'web-search',
  chargeLines: [WEB_SEARCH_LINE],
  open({ op, deps }) {
    if (!op.webPlugin) return null;
    let asked: WebPluginAsked | null = null;
    let plan: WebSearchPlan | null = null;
    return {
      body(body) {
        const web = readWebPlugin(body, deps.catalogue);
        if (!web) return body;
        asked = web.plugin;
        return web.body;
      },
      worstCase() {
        if (!asked) return null;
        plan = planWebSearch(asked, deps.catalogue);
        return { promptTokens: plan.resultsTokens, micros: plan.priceMicros };
      },
      // Its results (and its fee) are fresh each time.
      cacheable: () => asked === null,
      async afterHold(call) {
        if (!plan) return;
        let backend = backends.get(deps.httpClient);
        if (!backend) {
          backend = createWebSearchProvider(deps.httpClient, { now: deps.now }).webSearch;
          backends.set(deps.httpClient, backend);
        }
        await runWebSearch(call, plan, backend);
      },
    };
  },
};
