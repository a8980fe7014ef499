import type { MeteredUsage } from '../../metering/usage.js';
import type { ResponseObject, ResponsesRequest, ResponsesTool, ResponsesUsage } from './responses-types.js';

/** How a Response ended, from a chat finish reason. */
interface ResponseEnd {
  status: 'completed' | 'incomplete';
  incomplete_details: { reason: string } | null;
}

/**
 * The Response's `status` for a chat finish reason: `length` is `incomplete` for
 * `max_output_tokens`, `content_filter` is `incomplete` for `content_filter`, anything else (and
 * none) `completed`.
 */
export function responseEnd(finishReason: string | null): ResponseEnd {
  if (finishReason === 'length') {
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  }
  if (finishReason === 'content_filter') {
    return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  }
  return { status: 'completed', incomplete_details: null };
}

/** The Responses `usage` of metered token counts; reasoning tokens when the upstream told them. */
export function responsesUsage(usage: MeteredUsage, reasoningTokens = 0): ResponsesUsage {
  return {
    input_tokens: usage.promptTokens,
    input_tokens_details: { cached_tokens: usage.cachedTokens },
    output_tokens: usage.completionTokens,
    output_tokens_details: { reasoning_tokens: reasoningTokens },
    total_tokens: usage.promptTokens + usage.completionTokens,
  };
}

/** What a translated Response is stamped with: its id, the served model, when it was made. */
export interface ResponseStamp {
  id: string;
  model: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

/**
 * A Response of a translated call with no output yet (`status: in_progress`): every field the Open
 * Responses `ResponseResource` schema requires, echoed from the request or defaulted as OpenAI
 * defaults it (product.md "Answer"). `store` is `false`: the gateway stores nothing.
 */
export function responseShell(
  wire: ResponsesRequest,
  tools: readonly ResponsesTool[],
  stamp: ResponseStamp,
): ResponseObject {
  const reasoning = wire.reasoning ?? null;
  return {
    id: stamp.id,
    object: 'response',
    created_at: Math.floor(stamp.createdAt / 1000),
    status: 'in_progress',
    background: false,
    completed_at: null,
    error: null,
    incomplete_details: null,
    instructions: typeof wire.instructions === 'string' ? wire.instructions : null,
    max_output_tokens: typeof wire.max_output_tokens === 'number' ? wire.max_output_tokens : null,
    max_tool_calls: null,
    model: stamp.model,
    output: [],
    parallel_tool_calls: wire.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: stringOrNull(wire.prompt_cache_key),
    reasoning: reasoning && { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    safety_identifier: stringOrNull(wire.safety_identifier),
    service_tier: typeof wire.service_tier === 'string' ? wire.service_tier : 'default',
    store: false,
    temperature: numberOr(wire.temperature, 1),
    text: { ...wire.text, format: wire.text?.format ?? { type: 'text' } },
    tool_choice: wire.tool_choice ?? 'auto',
    tools: [...tools],
    top_logprobs: numberOr(wire.top_logprobs, 0),
    top_p: numberOr(wire.top_p, 1),
    presence_penalty: numberOr(wire.presence_penalty, 0),
    frequency_penalty: numberOr(wire.frequency_penalty, 0),
    truncation: 'disabled',
    usage: null,
    user: stringOrNull(wire.user),
    metadata: wire.metadata ?? {},
  };
}

const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);
const numberOr = (value: unknown, fallback: number) => (typeof value === 'number' ? value : fallback);
