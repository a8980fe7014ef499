import { tooLarge } from '../http/size-caps.js';
import { priceWorstCase } from '../metering/estimate-worst-case.js';
import { reserveCredit } from '../metering/reserve-credit.js';
import { planRoutes, readRoutingPreferences } from '../routing/plan-routes.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { CallHooks, CallInput, MeteredCall, PlannedCall, WorstCaseExtra } from './call.js';
import type { InferenceBody, InferenceOperation } from './inference-operation.js';
import { readLabels } from './read-labels.js';

export type { CallInput };

/**
 * Stage `plan`, before anything is held: the hooks' body rewrites, the attachment cap, labels, route
 * planning (model type and provider capability included; the hooks may reach more providers and
 * filter or reorder the routes), the transforms, and the worst case — priced over the paid routes
 * only (a route on the account's own key costs it nothing), with what the hooks add. Throws the
 * refusal as a `GatewayError`.
 */
export async function planCall<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  record: RequestRecord,
  input: Omit<CallInput<Body>, 'startedAt'>,
  hooks: readonly CallHooks[],
): Promise<PlannedCall<Body>> {
  const { request, deps } = input;
  let body = input.body;
  for (const hook of hooks) if (hook.body) body = hook.body(body) as Body;
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
  let reachable: Set<string> | undefined;
  for (const hook of hooks) {
    if (!hook.reachable) continue;
    const more = await hook.reachable();
    if (more) reachable = new Set([...(reachable ?? []), ...more]);
  }
  const plan = planRoutes(deps.catalogue, readRoutingPreferences(body, deps.catalogue.providers.keys()), {
    usesTools: op.usesTools?.(body) ?? false,
    modelType: op.modelType,
    path: op.path,
    serves: (provider) => deps.providers(provider)[op.capability] !== undefined,
    reachableProviders: reachable,
    observe: (key) => deps.endpointStats.get(key),
  });
  for (const hook of hooks) if (hook.routes) plan.routes = hook.routes(plan.routes);
  record.model = plan.requested.id;
  const transformed = op.transform?.(body, plan.routes[0]!) ?? null;
  if (transformed) body = transformed.body;
  let worstCase = op.worstCase(body, plan.routes);
  const extra = addedWorstCase(hooks);
  const paid = plan.routes.filter((route) => !route.byok);
  if (paid.length < plan.routes.length || extra) {
    // Priced again over the paid routes (a route on the account's own key costs it nothing), with
    // the prompt tokens the hooks may add (a search's results).
    const { usage } = worstCase;
    worstCase = priceWorstCase(
      { ...usage, promptTokens: usage.promptTokens + (extra?.promptTokens ?? 0) },
      paid.map((route) => route.endpoint.pricing),
    );
  }
  // Extra charge lines on top (product.md: a plugin's fee, the search's price on its backend).
  if (extra) worstCase = { ...worstCase, micros: worstCase.micros + extra.micros };
  const cacheable = hooks.every((hook) => hook.cacheable?.() ?? true);
  return { body, plan, worstCase, transforms: transformed?.transforms ?? null, cacheable };
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
  hooks: readonly CallHooks[],
): Promise<MeteredCall<Body>> {
  const { request, requestId, auth, deps, startedAt } = input;
  const reservation = await reserveCredit(deps.storage, {
    auth,
    requestId,
    worstCase: planned.worstCase,
    now: startedAt,
    ttlMs: deps.reservationTtlMs,
    record,
    ...(input.rateLimit ? { rateLimit: input.rateLimit } : {}),
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
    signal: stop.signal,
    startedAt,
    settled: null,
    usage: null,
    cut: (reason) => stop.abort(reason),
    leaveDrain: () => {},
    charges: [],
    hooks,
  };
  call.leaveDrain = deps.drain.openCall((reason) => call.cut(reason));
  return call;
}

/** What the hooks add to the worst case (stage `plan`), or `null` when none adds anything. */
function addedWorstCase(hooks: readonly CallHooks[]): WorstCaseExtra | null {
  let added: WorstCaseExtra | null = null;
  for (const hook of hooks) {
    const more = hook.worstCase?.();
    if (!more) continue;
    const sum: WorstCaseExtra = added ?? { promptTokens: 0, micros: 0 };
    added = { promptTokens: sum.promptTokens + more.promptTokens, micros: sum.micros + more.micros };
  }
  return added;
}
