import type { AuthContext } from '../auth/authenticate.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { tooLarge } from '../http/size-caps.js';
import { reserveCredit } from '../metering/reserve-credit.js';
import { planRoutes, readRoutingPreferences } from '../routing/plan-routes.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { InferenceBody, InferenceOperation } from './inference-operation.js';
import type { MeteredCall } from './metered-call.js';
import { readLabels } from './read-labels.js';

export interface CallInput<Body extends InferenceBody> {
  request: Request;
  requestId: string;
  body: Body;
  auth: AuthContext;
  deps: GatewayDeps;
  startedAt: number;
}

/**
 * The stages before any provider is called: the attachment cap, labels, route planning (model type
 * and provider capability included), the worst case and its hold, which writes the record as
 * `in_progress`. Throws the refusal (nothing held) as a `GatewayError`.
 */
export async function prepareCall<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  record: RequestRecord,
  input: CallInput<Body>,
): Promise<MeteredCall<Body>> {
  const { request, requestId, body, auth, deps, startedAt } = input;
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
  const plan = planRoutes(deps.catalogue, readRoutingPreferences(body, deps.catalogue.providers.keys()), {
    usesTools: op.usesTools?.(body) ?? false,
    modelType: op.modelType,
    path: op.path,
    serves: (provider) => deps.providers(provider)[op.capability] !== undefined,
    observe: (key) => deps.endpointStats.get(key),
  });
  record.model = plan.requested.id;
  const worstCase = op.worstCase(body, plan.routes);
  const reservation = await reserveCredit(deps.storage, {
    auth,
    requestId,
    worstCase,
    now: startedAt,
    ttlMs: deps.reservationTtlMs,
    record,
  });
  deps.observers.holdTaken(requestId);
  return {
    op: op as MeteredCall<Body>['op'],
    requestId,
    body,
    auth,
    deps,
    record,
    plan,
    reservation,
    worstCase,
    signal: request.signal,
    startedAt,
    settled: null,
    usage: null,
  };
}
