import { GatewayError, internalError } from '../errors/gateway-error.js';
import { type Charge, capAtHold, priceUsage, withChargeLines } from '../metering/price-usage.js';
import { releaseHold, settleRequest } from '../metering/settle-request.js';
import { unitCount } from '../metering/usage.js';
import { endpointKey } from '../routing/endpoint-stats.js';
import { type PlannedRoute, RoutingFailed, WalkAbandoned } from '../routing/walk-routes.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { Metered } from './inference-operation.js';
import { abandonedBecause, type MeteredCall } from './metered-call.js';
import { closeRecord, exportRequestSpan, failRecord, writeRequestRecord } from './request-log.js';

/**
 * The end of every metered request — the only place a hold is settled. Each call's settle runs
 * once: success, upstream failure, broken or abandoned stream, client gone, unexpected exception.
 */

/** Notes on the record which route served and how the walk went. */
export function recordRoute(
  call: MeteredCall,
  route: PlannedRoute,
  walk: { attempts: number; failures: RequestRecord['routingFailures'] },
): void {
  call.record.model = route.model.id;
  call.record.provider = route.endpoint.provider.id;
  call.record.attempts = walk.attempts;
  call.record.routingFailures = walk.failures;
  call.record.byok = route.byok !== undefined;
}

/**
 * Prices what the served request consumed, capped at its hold (a charge never exceeds its hold: what
 * the cap cut is the record's `overrunMicros`, logged as a warning and counted by the observer), and
 * writes its counts and cost on the record.
 */
export function recordUsage(call: MeteredCall, route: PlannedRoute, metered: Metered): Charge {
  const { usage } = metered;
  const tokens = priceUsage(usage, route.endpoint.pricing, {
    producedOutput: metered.producedOutput,
    byok: route.byok !== undefined,
  });
  const priced = withChargeLines(tokens, call.charges);
  const { charge, overrunMicros } = capAtHold(priced, call.reservation.amountMicros);
  const { record } = call;
  record.overrunMicros = overrunMicros;
  if (overrunMicros > 0) {
    call.deps.logger.warn(
      {
        requestId: call.requestId,
        model: route.model.id,
        provider: route.endpoint.provider.id,
        holdMicros: call.reservation.amountMicros,
        overrunMicros,
      },
      'the upstream reported usage beyond the hold; charged at the hold',
    );
  }
  record.promptTokens = usage.promptTokens;
  record.completionTokens = usage.completionTokens;
  record.cachedTokens = usage.cachedTokens;
  record.costMicros = charge.costMicros;
  record.savedMicros = charge.savedMicros;
  record.waived = charge.waived;
  record.finishReason = metered.finishReason;
  call.usage = usage;
  return charge;
}

/**
 * Settles the call once (one ledger entry for a non-zero cost, the record, the hold released — in
 * one transaction), then the span and the endpoint's latency figures. Returns whether the settle
 * landed; when it did not, nothing was charged, the record says why and `call.settleFailure` is
 * what the request answers with. A second call returns the first one's outcome and writes nothing.
 */
export function settleCall(
  call: MeteredCall,
  route: PlannedRoute | null,
  ttftMs: number | null,
): Promise<boolean> {
  call.settled ??= settleOnce(call, route, ttftMs).finally(call.leaveDrain);
  return call.settled;
}

async function settleOnce(call: MeteredCall, route: PlannedRoute | null, ttftMs: number | null) {
  const { deps, record } = call;
  record.ttftMs = ttftMs;
  closeRecord(record, deps.now());
  const failure = await settleRequest(deps.storage, deps.logger, {
    reservationId: call.reservation.id,
    record,
    description: chargeDescription(call),
  });
  if (failure) {
    // Nothing was charged (a settle past its deadline may still land, and then counts alone: the
    // storage refuses this failure's record over a settled one); the request is on record as the
    // failure it became.
    call.settleFailure = failure;
    record.costMicros = 0;
    record.savedMicros = 0;
    record.waived = null;
    failRecord(record, failure);
    const recordFailure = async () => {
      await writeRequestRecord(deps.storage, deps.logger, record);
      await releaseHold(deps.storage, deps.logger, call.reservation.id, record.id);
    };
    // With the storage failing, the answer does not wait on it again: these land once it answers.
    if (failure.code === 'storage_unavailable') void recordFailure();
    else await recordFailure();
  }
  if (route && record.status === 'success' && ttftMs !== null) {
    const key = endpointKey(route.endpoint.provider.id, route.endpoint.upstreamModel);
    deps.endpointStats.observe(key, ttftMs, record.completionTokens, (record.durationMs ?? 0) - ttftMs);
  }
  exportRequestSpan(deps, record, call.body.model, call.op.spanOperation);
  return failure === null;
}

/**
 * A metered request that ended without an answer (every route failed, the client left, or an
 * unexpected error): nothing is charged, the record says why, and the caller gets the error.
 */
export async function failCall(call: MeteredCall, error: unknown): Promise<never> {
  const { record } = call;
  let gatewayError: GatewayError;
  if (error instanceof RoutingFailed) {
    record.attempts = error.attempts;
    record.routingFailures = error.failures;
    gatewayError = error.error;
  } else if (error instanceof WalkAbandoned) {
    record.attempts = error.attempts;
    record.routingFailures = error.failures;
    gatewayError = abandonedBecause(call);
  } else if (error instanceof GatewayError) {
    gatewayError = error;
  } else if (call.signal.aborted) {
    gatewayError = abandonedBecause(call);
  } else {
    gatewayError = internalError();
  }
  if (call.settled === null) await settleUnanswered(call, gatewayError);
  // A client that left gets nothing anyway; a plain error keeps its abort out of the error log.
  throw error instanceof RoutingFailed || call.signal.aborted ? gatewayError : error;
}

/**
 * Settles, once, a held call that got no answer: the record says why (`status`: `error`, or
 * `refused` for a refusal after the hold), and nothing is charged but its extra lines — a plugin
 * that ran (a web search) is charged even though the model then failed (spec Cost rule 6).
 */
export async function settleUnanswered(
  call: MeteredCall,
  error: GatewayError,
  status: 'error' | 'refused' = 'error',
): Promise<void> {
  const { record } = call;
  failRecord(record, error, status);
  record.costMicros = call.charges.reduce((sum, line) => sum + line.micros, 0);
  record.savedMicros = 0;
  record.waived = null;
  await settleCall(call, null, null);
}

/** The ledger line of a charge: the model and what it consumed, never content. */
function chargeDescription(call: MeteredCall): string {
  const { record, usage } = call;
  const lines = [
    `${record.promptTokens} prompt tokens (${record.cachedTokens} cached), ${record.completionTokens} completion tokens`,
  ];
  const images = usage ? unitCount(usage, 'image') : 0;
  const searchUnits = usage ? unitCount(usage, 'search_unit') : 0;
  if (images) lines.push(`${images} images`);
  if (searchUnits) lines.push(`${searchUnits} search units`);
  for (const line of call.charges) if (line.micros > 0) lines.push(line.describe(usage !== null));
  return `${record.model} via ${record.provider}: ${lines.join(', ')}`;
}
