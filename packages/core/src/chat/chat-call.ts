import type { AuthContext } from '../auth/authenticate.js';
import type { WorstCase } from '../billing/estimate-worst-case.js';
import type { GatewayDeps } from '../http/route.js';
import type { ChatRequest, TokenUsage } from '../providers/chat-types.js';
import type { UpstreamTarget } from '../providers/provider-adapter.js';
import type { RoutePlan } from '../routing/plan-routes.js';
import type { PlannedRoute } from '../routing/walk-routes.js';
import type { CreditReservation, RequestRecord } from '../storage/metering-types.js';
import type { EpochMs } from '../storage/types.js';

/** Everything a chat request carries from the pre-flight to settle. */
export interface ChatCall {
  requestId: string;
  body: ChatRequest;
  auth: AuthContext;
  deps: GatewayDeps;
  /** The request record being filled in; written once, by settle. */
  record: RequestRecord;
  plan: RoutePlan;
  reservation: CreditReservation;
  worstCase: WorstCase;
  /** The caller's signal: aborts when the client goes away. */
  signal: AbortSignal;
  startedAt: EpochMs;
}

/** Where one attempt goes. */
export function upstreamTarget(route: PlannedRoute): UpstreamTarget {
  return {
    provider: route.endpoint.provider,
    upstreamModel: route.endpoint.upstreamModel,
    maxOutputTokens: route.model.maxOutputTokens,
  };
}

/**
 * Token counts to charge when the provider's own count is missing or incomplete (Cost rule 7): the
 * prompt as the provider reported it, else as the pre-flight estimated it; the completion at about
 * 4 characters per token over the text actually delivered (or the provider's partial count, if
 * higher), bounded by the completion ceiling the request was reserved against.
 */
export function estimatedUsage(call: ChatCall, known: TokenUsage | null, deliveredChars: number): TokenUsage {
  const fromText = Math.ceil(deliveredChars / 4);
  return {
    promptTokens: known && known.promptTokens > 0 ? known.promptTokens : call.worstCase.promptTokens,
    cachedTokens: known?.cachedTokens ?? 0,
    cacheWriteTokens: known?.cacheWriteTokens ?? 0,
    completionTokens: Math.min(
      Math.max(fromText, known?.completionTokens ?? 0),
      call.worstCase.completionTokens,
    ),
  };
}

/** The OpenAI `usage` object for our token counts. */
export function chatUsage(usage: TokenUsage) {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
  };
}

/** Characters of generated output in a message or delta: text, reasoning and tool-call arguments. */
export function outputCharacters(part: {
  content?: unknown;
  tool_calls?: { function?: { arguments?: string } }[];
  [field: string]: unknown;
}): number {
  let chars = typeof part.content === 'string' ? part.content.length : 0;
  for (const field of ['reasoning_content', 'reasoning', 'refusal'] as const) {
    const value = part[field];
    if (typeof value === 'string') chars += value.length;
  }
  for (const call of part.tool_calls ?? []) chars += call.function?.arguments?.length ?? 0;
  return chars;
}
