import { GatewayError } from '../../errors/gateway-error.js';
import { abandonedBecause, type MeteredCall } from '../../pipeline/metered-call.js';
import { settleUnanswered } from '../../pipeline/settle-call.js';
import { urlCitations, withCitations } from './citations.js';
import { insertAboveLastUser, searchResultsMessage } from './search-results-message.js';
import type { SearchAnswer, WebSearchCapability } from './search-types.js';
import type { WebSearchPlan } from './web-plugin-request.js';

/** The search fee's charge line: `cost_breakdown.web_search_micros`. */
export const WEB_SEARCH_LINE = 'web_search';

/** How long one search may take when its provider sets no `timeout_ms`. */
const DEFAULT_SEARCH_TIMEOUT_MS = 10_000;

/**
 * The `web` plugin's run, after the hold and before the walk (its `afterHold` hook): one search on
 * the planned backend. On success the results go to the model as a system message just above the
 * last user message, the answer will carry them as `url_citation` annotations, and the call owes the
 * search fee (`price_per_search`, which the hold covered; a cost the backend reports is logged, not
 * charged) on top of its tokens — charged by the settle whatever the walk then does. On failure (network, non-2xx, an unreadable answer,
 * the timeout) the request is refused `503 plugin_unavailable`: settled with nothing charged, the
 * hold released, the record `refused`; the error is thrown.
 */
export async function runWebSearch(
  call: MeteredCall,
  plan: WebSearchPlan,
  backend: WebSearchCapability,
): Promise<void> {
  let answer: SearchAnswer;
  try {
    answer = await searchWithin(call, plan, backend);
  } catch (error) {
    const refusal = call.signal.aborted
      ? abandonedBecause(call)
      : new GatewayError(
          'plugin_unavailable',
          `The web plugin cannot run: the search backend ${plan.backend.id} ${describeFailure(error)}. Nothing was charged.`,
        );
    // The search failed, so no fee is owed: nothing is charged.
    await settleUnanswered(call, refusal, 'refused');
    throw refusal;
  }
  call.charges.push({
    id: WEB_SEARCH_LINE,
    micros: plan.priceMicros,
    describe: (answered) => (answered ? '1 web search' : '1 web search (the model failed)'),
  });
  if (answer.reportedCostMicros !== null && answer.reportedCostMicros !== plan.priceMicros) {
    // The backend's own figure is the operator's business (its invoice), never the caller's charge.
    call.deps.logger.debug?.(
      { requestId: call.requestId, backend: plan.backend.id, reportedCostMicros: answer.reportedCostMicros },
      'the search backend reported a cost other than price_per_search',
    );
  }
  const body = call.body as { messages?: unknown };
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: unknown }[]) : [];
  call.body = {
    ...call.body,
    messages: insertAboveLastUser(messages, searchResultsMessage(answer.results, plan.searchPrompt)),
  };
  call.op = withCitations(call.op, urlCitations(answer.results));
}

/** The search, aborted (and failed as a timeout) after the backend's `timeout_ms`. */
async function searchWithin(
  call: MeteredCall,
  plan: WebSearchPlan,
  backend: WebSearchCapability,
): Promise<SearchAnswer> {
  const timeoutMs = plan.backend.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS;
  const controller = new AbortController();
  const forward = () => controller.abort(call.signal.reason);
  call.signal.addEventListener('abort', forward, { once: true });
  let cancel = () => {};
  const timedOut = new Promise<never>((_, reject) => {
    cancel = call.deps.clock.schedule(() => {
      const error = new SearchTimeout(timeoutMs);
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      backend.search(
        plan.backend,
        { query: plan.query, numResults: plan.maxResults },
        { signal: controller.signal },
      ),
      timedOut,
    ]);
  } finally {
    cancel();
    call.signal.removeEventListener('abort', forward);
  }
}

class SearchTimeout extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** Why the search failed, for the caller: the kind and status only, never the backend's words. */
function describeFailure(error: unknown): string {
  if (error instanceof SearchTimeout) return `did not answer within ${error.ms} ms`;
  const status = (error as { status?: unknown })?.status;
  if ((error as { kind?: unknown })?.kind === 'http' && typeof status === 'number') {
    return status === 502 ? 'gave an unreadable answer or HTTP 502' : `answered HTTP ${status}`;
  }
  return 'could not be reached';
}
