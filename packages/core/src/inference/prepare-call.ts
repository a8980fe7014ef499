import type { AuthContext } from '../auth/authenticate.js';
import { byokFirst, loadAccountProviderKeys } from '../byok/byok-routing.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { tooLarge } from '../http/size-caps.js';
import { priceWorstCase, type WorstCase } from '../metering/estimate-worst-case.js';
import { reserveCredit } from '../metering/reserve-credit.js';
import type { DeferredRateLimit } from '../protections/rate-limit.js';
import { planRoutes, type RoutePlan, readRoutingPreferences } from '../routing/plan-routes.js';
import type { RequestRecord } from '../storage/metering-types.js';
import { planWebSearch, readWebPlugin, type WebSearchPlan } from '../web-search/web-plugin-request.js';
import type { InferenceBody, InferenceOperation, TransformReport } from './inference-operation.js';
import type { MeteredCall } from './metered-call.js';
import { readLabels } from './read-labels.js';

export interface CallInput<Body extends InferenceBody> {
  request: Request;
  requestId: string;
  body: Body;
  auth: AuthContext;
  deps: GatewayDeps;
  startedAt: number;
  /** The request's rate-limit hit when it is still to count (the hold counts it); absent for a batch item. */
  rateLimit?: DeferredRateLimit;
}

/** A request planned but not yet held: what the hold and the walk will use. */
export interface PlannedCall<Body extends InferenceBody> {
  /** The body as it goes upstream (after transforms). */
  body: Body;
  plan: RoutePlan;
  worstCase: WorstCase;
  transforms: TransformReport[] | null;
  /** The `web` plugin's search, when asked for; its price is in `worstCase`. */
  webSearch?: WebSearchPlan | null;
}

/**
 * The stages before anything is held: the attachment cap, labels, route planning (model type and
 * provider capability included; the account's own provider keys first), the transforms, and the
 * worst case — priced over the paid routes only, since a BYOK route costs the account nothing.
 * Throws the refusal as a `GatewayError`.
 */
export async function planCall<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  record: RequestRecord,
  input: Omit<CallInput<Body>, 'startedAt'>,
): Promise<PlannedCall<Body>> {
  const { request, auth, deps } = input;
  let body = input.body;
  const web = op.webPlugin ? readWebPlugin(body, deps.catalogue) : null;
  if (web) body = web.body;
  const attachments = op.attachments?.(body);
  if (attachments) {
    record.attachments = attachments.counts;
    if (attachments.largestBytes > deps.maxAttachmentBytes)
      throw tooLarge('Attachment', attachments.largestBytes, deps.maxAttachmentBytes);
  }
  record.metadata = readLabels(body.metadata, {
    referer: request.headers.get('http-referer'),
    title: request.headers.get('x-title'),
  });
  const accountKeys = auth.byokKeys > 0 ? await loadAccountProviderKeys(deps, auth.account.id) : null;
  const plan = planRoutes(deps.catalogue, readRoutingPreferences(body, deps.catalogue.providers.keys()), {
    usesTools: op.usesTools?.(body) ?? false,
    modelType: op.modelType,
    path: op.path,
    serves: (provider) => deps.providers(provider)[op.capability] !== undefined,
    byokProviders: accountKeys ? new Set(accountKeys.keys()) : undefined,
    observe: (key) => deps.endpointStats.get(key),
  });
  if (accountKeys) plan.routes = byokFirst(plan.routes, accountKeys);
  record.model = plan.requested.id;
  const transformed = op.transform?.(body, plan.routes[0]!) ?? null;
  if (transformed) body = transformed.body;
  let worstCase = op.worstCase(body, plan.routes);
  const webSearch = web ? planWebSearch(web.plugin, deps.catalogue) : null;
  const paid = plan.routes.filter((route) => !route.byok);
  if (paid.length < plan.routes.length || webSearch) {
    // Priced again over the paid routes (a BYOK route costs the account nothing), with the most a
    // search's results can add to the prompt.
    const { usage } = worstCase;
    worstCase = priceWorstCase(
      { ...usage, promptTokens: usage.promptTokens + (webSearch?.resultsTokens ?? 0) },
      paid.map((route) => route.endpoint.pricing),
    );
  }
  // Plugin fees on top (product.md): the search's price on the backend it will use.
  if (webSearch) worstCase = { ...worstCase, micros: worstCase.micros + webSearch.priceMicros };
  return { body, plan, worstCase, transforms: transformed?.transforms ?? null, webSearch };
}

/**
 * The pre-flight: holds the worst case (which writes the record as `in_progress`, and counts the
 * request's rate-limit hit first when it is still to count) and returns the call the walk and the
 * settle carry. Throws the refusal (nothing held) as a `GatewayError`.
 */
export async function holdCall<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  record: RequestRecord,
  input: CallInput<Body>,
  planned: PlannedCall<Body>,
): Promise<MeteredCall<Body>> {
  const { request, requestId, auth, deps, startedAt } = input;
  const reservation = await reserveCredit(deps.storage, {
    auth,
    requestId,
    worstCase: planned.worstCase,
    now: startedAt,
    ttlMs: deps.reservationTtlMs,
    record,
    rateLimit: input.rateLimit?.takeForHold(),
  });
  deps.observers.holdTaken(requestId);
  // The call's own signal: the caller leaving aborts it, and so does a drain's cut (its reason).
  const stop = new AbortController();
  const follow = () => stop.abort(request.signal.reason);
  if (request.signal.aborted) follow();
  else request.signal.addEventListener('abort', follow, { once: true });
  const call: MeteredCall<Body> = {
    op: op as MeteredCall<Body>['op'],
    requestId,
    body: planned.body,
    auth,
    deps,
    record,
    plan: planned.plan,
    reservation,
    worstCase: planned.worstCase,
    transforms: planned.transforms,
    cache: null,
    signal: stop.signal,
    startedAt,
    settled: null,
    usage: null,
    cut: (reason) => stop.abort(reason),
    leaveDrain: () => {},
  };
  call.leaveDrain = deps.drain.openCall((reason) => call.cut(reason));
  return call;
}
