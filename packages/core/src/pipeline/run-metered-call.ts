import { type GatewayError, internalError } from '../errors/gateway-error.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { refuseBeforeHold } from '../metering/before-hold.js';
import { gatewayCostView } from '../metering/price-usage.js';
import { formatMicrosAsUsd } from '../money/micros.js';
import { walkRoutes } from '../routing/walk-routes.js';
import { StorageUnavailableError } from '../storage/guard-storage.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { CallHooks, MeteredCall, PlannedCall } from './call.js';
import type { CallContext } from './feature.js';
import { chargeLinesOf, featuresOf } from './features-of.js';
import type { InferenceBody, InferenceOperation } from './inference-operation.js';
import { servedView, upstreamTarget, walkOptions } from './metered-call.js';
import { streamMeteredCall } from './metered-stream.js';
import { type CallInput, holdCall, planCall } from './prepare-call.js';
import { recordStorageRefusal } from './record-storage-refusal.js';
import { closeRecord, failRecord, startRequestRecord, writeRecordAndSpan } from './request-log.js';
import { aroundCall, beforeHold, checkAnswer, openHooks, settledHooks } from './run-hooks.js';
import { failCall, recordRoute, recordUsage, settleCall } from './settle-call.js';

/** Non-streaming deadline for the whole routing walk. */
const COMPLETE_DEADLINE_MS = 60_000;

/**
 * One metered inference request, whatever the endpoint, through the stages of `pipeline/stages.ts`:
 * record → plan (labels, routes, transforms, worst case) → hold → call or stream → answer → settle
 * exactly once → span, the features' hooks run at each (`pipeline/call.ts`). A refusal before the
 * hold is recorded with its code and never charged; a short-circuit (a cache hit) is answered
 * before the hold and charged nothing. The request's rate-limit hit when still to count
 * (`input.rateLimit`) is counted by the hold, or on its own before any answer that comes first.
 * The features' `around` hooks wrap the whole run (an idempotent replay answers without it).
 */
export async function runMeteredCall<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  input: Omit<CallInput<Body>, 'startedAt'>,
): Promise<Response> {
  const { request, requestId, body, auth, deps } = input;
  const startedAt = deps.now();
  const streams = op.stream !== undefined && op.streams?.(body) === true;
  const record = startRequestRecord({
    requestId,
    auth,
    endpoint: op.endpoint,
    requestedModel: body.model,
    stream: streams,
    startedAt,
    preset: body.preset,
  });
  const recordOfCall = (refusal: GatewayError) => recordRefusal(deps, record, refusal, op.spanOperation);
  // Whatever ends the call before its hold, with the rate-limit hit counted first.
  const refuse = (error: unknown) => refuseBeforeHold(input.rateLimit, error, recordOfCall);
  const run = async () => {
    let call: MeteredCall<Body>;
    let hooks: readonly CallHooks[];
    try {
      hooks = openHooks(featuresOf(deps), ctx);
      // Stage `plan`.
      const planned = await planCall(op, record, input, hooks);
      // Stage `hold`: the hooks before it may refuse or answer, then the hold.
      const short = await beforeHold(hooks, planned as PlannedCall<InferenceBody>);
      if (short) {
        await input.rateLimit?.count();
        // Refused (recorded below, uncharged) when a hook finds the answer must not be given.
        const blocked = checkAnswer(hooks, short.answer, record, 'short-circuit');
        if (blocked) throw blocked;
        return short.respond();
      }
      call = await holdCall(op, record, { ...input, startedAt }, planned, hooks);
    } catch (error) {
      return refuse(error);
    }
    for (const hook of hooks) if (hook.afterHold) await hook.afterHold(call as MeteredCall);
    // Stages `call`/`stream`, `answer` and `settle`.
    const response = await (streams ? streamMeteredCall(call) : completeCall(call));
    for (const hook of hooks) hook.answered?.(response);
    return response;
  };
  const ctx: CallContext = {
    op: op as CallContext['op'],
    request,
    requestId,
    body,
    auth,
    deps,
    record,
    streams,
    countRateLimit: async () => {
      await input.rateLimit?.count().catch(refuse);
    },
    recordRefusal: recordOfCall,
    recordReplay: async () => {
      record.status = 'replayed';
      closeRecord(record, deps.now());
      await writeRecordAndSpan(deps, record, op.spanOperation);
    },
  };
  return aroundCall(featuresOf(deps), ctx, run);
}

/**
 * A request refused before it held any credit (by the pipeline, or before its handler ran: rpm,
 * size, validation): recorded with its code, told to the observer and the span; never charged.
 */
export async function recordRefusal(
  deps: GatewayDeps,
  record: RequestRecord,
  error: GatewayError,
  spanOperation: string,
): Promise<void> {
  if (error instanceof StorageUnavailableError) {
    return recordStorageRefusal(deps, record, error, spanOperation);
  }
  failRecord(record, error, 'refused');
  closeRecord(record, deps.now());
  await writeRecordAndSpan(deps, record, spanOperation);
}

/**
 * A non-streaming answer: walk the routes, meter what the provider reports, settle, answer with the
 * operation's body, the `gateway` object and `X-Gateway-Cost-Usd`. Anything that throws after the
 * hold — the walk, the meter, building the answer — settles as a failure, once.
 */
async function completeCall<Body extends InferenceBody>(call: MeteredCall<Body>): Promise<Response> {
  const { deps, op } = call;
  try {
    const outcome = await walkRoutes(
      call.plan.routes,
      (route, control) =>
        op.call(deps.providers(route.endpoint.provider), call.body, upstreamTarget(call, route), control),
      walkOptions(call, COMPLETE_DEADLINE_MS),
    );
    const { route, value } = outcome;
    recordRoute(call, route, outcome);
    const metered = op.meter(value, call.body, call.worstCase);
    const charge = recordUsage(call, route, metered);
    const served = servedView(call, route, outcome.attempts);
    const answer = op.respond(value, call.body, served, metered);
    const blocked = checkAnswer(call.hooks, answer, call.record, 'answer');
    if (blocked) {
      // Settled as a charge for the tokens (status `error`), and the refusal answered instead.
      failRecord(call.record, blocked);
      if (!(await settleCall(call, route, null))) throw call.settleFailure ?? internalError();
      throw blocked;
    }
    if (!(await settleCall(call, route, null))) throw call.settleFailure ?? internalError();
    await settledHooks({ call, route, usage: metered.usage, finishReason: metered.finishReason, answer });
    return deps.jsonResponse(
      { ...answer, gateway: gatewayCostView(charge, served, chargeLinesOf(deps)) },
      200,
      {
        'X-Gateway-Cost-Usd': formatMicrosAsUsd(charge.costMicros),
      },
    );
  } catch (error) {
    return failCall(call, error);
  }
}
