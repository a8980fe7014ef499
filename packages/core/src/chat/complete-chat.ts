import { gatewayCostView } from '../billing/price-usage.js';
import { internalError } from '../errors/gateway-error.js';
import { jsonResponse } from '../http/responses.js';
import { formatMicrosAsUsd } from '../money/micros.js';
import { walkRoutes } from '../routing/walk-routes.js';
import { type ChatCall, chatUsage, estimatedUsage, outputCharacters, upstreamTarget } from './chat-call.js';
import { failChat, recordRoute, recordUsage, settleChat } from './finish-chat.js';

/** Non-streaming deadline for the whole routing walk. */
export const COMPLETE_DEADLINE_MS = 60_000;

/**
 * A non-streaming chat completion: walk the routes, price what the provider reports, settle,
 * answer with the completion, the `gateway` object and the `X-Gateway-Cost-Usd` header.
 */
export async function completeChat(call: ChatCall): Promise<Response> {
  let outcome: Awaited<ReturnType<typeof walk>>;
  try {
    outcome = await walk(call);
  } catch (error) {
    return failChat(call, error);
  }
  const { route, value } = outcome;
  recordRoute(call, route, outcome);
  const { completion } = value;
  const choice = completion.choices[0];
  const message = choice?.message ?? { role: 'assistant' as const, content: null };
  const producedOutput =
    (typeof message.content === 'string' && message.content.length > 0) ||
    (message.tool_calls?.length ?? 0) > 0;
  const usage =
    value.usage ??
    estimatedUsage(
      call,
      null,
      completion.choices.reduce((n, c) => n + outputCharacters(c.message), 0),
    );
  const charge = recordUsage(call, route, usage, producedOutput, choice?.finish_reason ?? null);

  if (!(await settleChat(call, route, null))) throw internalError();
  const body = {
    ...completion,
    model: route.model.id,
    usage: completion.usage ?? chatUsage(usage),
    gateway: gatewayCostView(charge, {
      requestId: call.requestId,
      model: route.model.id,
      provider: route.endpoint.provider.id,
      attempts: outcome.attempts,
      requestedModel: call.plan.requested.id,
    }),
  };
  return jsonResponse(body, 200, { 'X-Gateway-Cost-Usd': formatMicrosAsUsd(charge.costMicros) });
}

function walk(call: ChatCall) {
  const { deps } = call;
  return walkRoutes(
    call.plan.routes,
    (route, control) =>
      deps.providers(route.endpoint.provider).complete(call.body, upstreamTarget(route), control),
    {
      attemptsPerRoute: deps.attemptsPerRoute,
      deadlineAt: call.startedAt + COMPLETE_DEADLINE_MS,
      signal: call.signal,
      clock: deps.clock,
      onAttemptFailed: deps.observers.attemptFailed(call.requestId),
    },
  );
}
