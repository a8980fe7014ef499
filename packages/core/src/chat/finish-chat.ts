import { type Charge, priceUsage } from '../billing/price-usage.js';
import { chargeDescription, settleRequest } from '../billing/settle-request.js';
import { ClientClosedError, GatewayError, internalError } from '../errors/gateway-error.js';
import type { TokenUsage } from '../providers/chat-types.js';
import { closeRecord, exportRequestSpan, failRecord, writeRequestRecord } from '../records/request-log.js';
import { endpointKey } from '../routing/endpoint-stats.js';
import { type PlannedRoute, RoutingFailed } from '../routing/walk-routes.js';
import type { ChatCall } from './chat-call.js';

/** Notes on the record which route served and how the walk went. */
export function recordRoute(
  call: ChatCall,
  route: PlannedRoute,
  walk: { attempts: number; failures: ChatCall['record']['routingFailures'] },
): void {
  call.record.model = route.model.id;
  call.record.provider = route.endpoint.provider.id;
  call.record.attempts = walk.attempts;
  call.record.routingFailures = walk.failures;
}

/** Prices the served request and writes its tokens and cost on the record. */
export function recordUsage(
  call: ChatCall,
  route: PlannedRoute,
  usage: TokenUsage,
  producedOutput: boolean,
  finishReason: string | null,
): Charge {
  const charge = priceUsage(usage, route.endpoint.pricing, producedOutput);
  const { record } = call;
  record.promptTokens = usage.promptTokens;
  record.completionTokens = usage.completionTokens;
  record.cachedTokens = usage.cachedTokens;
  record.costMicros = charge.costMicros;
  record.savedMicros = charge.savedMicros;
  record.waived = charge.waived;
  record.finishReason = finishReason;
  return charge;
}

/**
 * The end of every chat request that held credit: settle (one ledger entry for a non-zero cost,
 * the record, the hold released — all at once), then the span. Returns whether the settle landed;
 * when it did not, nothing was charged.
 */
export async function settleChat(
  call: ChatCall,
  route: PlannedRoute | null,
  ttftMs: number | null,
): Promise<boolean> {
  const { deps, record } = call;
  record.ttftMs = ttftMs;
  closeRecord(record, deps.now());
  const settled = await settleRequest(deps.storage, deps.logger, {
    reservationId: call.reservation.id,
    record,
    description: chargeDescription(record),
  });
  if (!settled) {
    // Nothing was charged; the request is still on record, as the failure it became.
    record.costMicros = 0;
    record.savedMicros = 0;
    record.waived = null;
    failRecord(record, internalError());
    await writeRequestRecord(deps.storage, deps.logger, record);
  }
  if (route && record.status === 'success' && ttftMs !== null) {
    const key = endpointKey(route.endpoint.provider.id, route.endpoint.upstreamModel);
    deps.endpointStats.observe(key, ttftMs, record.completionTokens, (record.durationMs ?? 0) - ttftMs);
  }
  exportRequestSpan(deps, record, call.body.model);
  return settled;
}

/**
 * A chat request that ended without an answer (every route failed, the client left, or an
 * unexpected error): nothing is charged, the record says why, and the caller gets the error.
 */
export async function failChat(call: ChatCall, error: unknown): Promise<never> {
  const { record } = call;
  let gatewayError: GatewayError;
  if (error instanceof RoutingFailed) {
    record.attempts = error.attempts;
    record.routingFailures = error.failures;
    gatewayError = error.error;
  } else if (error instanceof GatewayError) {
    gatewayError = error;
  } else if (call.signal.aborted) {
    gatewayError = new ClientClosedError();
  } else {
    gatewayError = internalError();
  }
  failRecord(record, gatewayError);
  record.costMicros = 0;
  await settleChat(call, null, null);
  // A client that left gets nothing anyway; a plain error keeps its abort out of the error log.
  throw error instanceof RoutingFailed || gatewayError instanceof ClientClosedError ? gatewayError : error;
}
