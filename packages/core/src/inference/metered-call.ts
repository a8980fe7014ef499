import type { AuthContext } from '../auth/authenticate.js';
import { ClientClosedError, GatewayError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import type { OutputGuard } from '../guardrails/output-guard.js';
import type { WorstCase } from '../metering/estimate-worst-case.js';
import type { ServedView } from '../metering/price-usage.js';
import type { MeteredUsage } from '../metering/usage.js';
import type { UpstreamTarget } from '../providers/provider-adapter.js';
import type { CacheRequest } from '../response-cache/cache-request.js';
import type { RoutePlan } from '../routing/plan-routes.js';
import type { PlannedRoute, WalkOptions } from '../routing/walk-routes.js';
import type { CreditReservation, RequestRecord } from '../storage/metering-types.js';
import type { EpochMs, Micros } from '../storage/types.js';
import type { CutCall } from '../system/drain.js';
import type { WebSearchPlan } from '../web-search/web-plugin-request.js';
import type { InferenceBody, InferenceOperation, TransformReport } from './inference-operation.js';

/** Everything one metered request carries from its hold to its settle. */
export interface MeteredCall<Body extends InferenceBody = InferenceBody> {
  op: InferenceOperation<Body>;
  requestId: string;
  body: Body;
  auth: AuthContext;
  deps: GatewayDeps;
  /** The request record being filled in; written with the hold, completed once by the settle. */
  record: RequestRecord;
  plan: RoutePlan;
  reservation: CreditReservation;
  worstCase: WorstCase;
  /** What transforms did to the body, for `gateway.transforms`; `null` when none was asked for. */
  transforms: TransformReport[] | null;
  /** Set when the caller opted in to the response cache (the answer is kept once it is settled). */
  cache: CacheRequest | null;
  /**
   * Aborts when the client goes away (its reason then the caller's) or when a drain cuts the call
   * (a `GatewayError`, `shutting_down`); see `abandonedBecause`.
   */
  signal: AbortSignal;
  startedAt: EpochMs;
  /** Set by the one settle; a second settle is a no-op that returns the first one's outcome. */
  settled: Promise<boolean> | null;
  /** Set when the settle failed: the error the request answers with (`500`, or `503 storage_unavailable`). */
  settleFailure?: GatewayError;
  /** What the request consumed, once metered (for the ledger line). */
  usage: MeteredUsage | null;
  /** The `web` plugin's search, when asked for (run after the hold, before the walk). */
  webSearch?: WebSearchPlan | null;
  /** What a plugin that ran costs (the search fee): charged on top of tokens, also on failure. */
  pluginFeeMicros?: Micros;
  /** The account's output-stage guardrails, when it has any. */
  guard?: OutputGuard | null;
  /** Ends the call early for a drain: aborts `signal`; a stream replaces it with its own break. */
  cut: CutCall;
  /** Tells the drain the call is over; called once its settle landed. */
  leaveDrain: () => void;
}

/** Why an aborted call was abandoned: the drain's cut as it is, else the client that left. */
export function abandonedBecause(call: MeteredCall): GatewayError {
  const reason: unknown = call.signal.reason;
  return reason instanceof GatewayError ? reason : new ClientClosedError();
}

/**
 * Where one attempt of `call` goes, with the output ceiling a chat request that names none is sent:
 * the model's, lowered to what its context leaves after the prompt's pre-flight estimate.
 */
export function upstreamTarget(call: MeteredCall, route: PlannedRoute): UpstreamTarget {
  const { maxOutputTokens, contextLength } = route.model;
  let ceiling = maxOutputTokens ?? 0;
  if (ceiling > 0 && contextLength !== null) {
    ceiling = Math.max(1, Math.min(ceiling, contextLength - call.worstCase.usage.promptTokens));
  }
  return {
    provider: route.endpoint.provider,
    upstreamModel: route.endpoint.upstreamModel,
    maxOutputTokens: ceiling,
  };
}

/** The walk's options for a call: its attempts, its deadline from the start, its caller's signal. */
export function walkOptions(call: MeteredCall, deadlineMs: number): WalkOptions {
  const { deps } = call;
  return {
    attemptsPerRoute: deps.attemptsPerRoute,
    deadlineAt: call.startedAt + deadlineMs,
    signal: call.signal,
    clock: deps.clock,
    onAttemptFailed: deps.observers.attemptFailed(call.requestId),
  };
}

/** Who served the call, for the answer and its `gateway` object. */
export function servedView(call: MeteredCall, route: PlannedRoute, attempts: number): ServedView {
  return {
    requestId: call.requestId,
    model: route.model.id,
    provider: route.endpoint.provider.id,
    attempts,
    requestedModel: call.plan.requested.id,
    ...(call.transforms && { transforms: call.transforms }),
  };
}
