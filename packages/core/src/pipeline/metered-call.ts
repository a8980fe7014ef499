import { ClientClosedError, GatewayError } from '../errors/gateway-error.js';
import type { ServedView } from '../metering/price-usage.js';
import type { UpstreamTarget } from '../providers/provider-adapter.js';
import type { PlannedRoute, WalkOptions } from '../routing/walk-routes.js';
import type { MeteredCall } from './call.js';

export type { MeteredCall };

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
