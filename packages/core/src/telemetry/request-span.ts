/** A span attribute value; `null` and `undefined` are skipped when the span is encoded. */
export type SpanAttributeValue = string | number | boolean | string[] | null | undefined;

/**
 * The one span the gateway records per request, as a plain object. It carries counts, names and
 * codes only: never a prompt, completion, tool argument or system prompt (spec, "Outbound trace
 * export").
 */
export interface RequestSpan {
  /** `{operation} {model}` as the GenAI conventions ask, e.g. `chat anthropic/claude-sonnet-4`. */
  name: string;
  /** The request's `req_…` id. */
  requestId: string;
  /** Epoch milliseconds. */
  startMs: number;
  /** Epoch milliseconds. */
  endMs: number;
  status: 'ok' | 'error';
  /** A gateway error code such as `upstream_error`; never a message that could hold content. */
  errorCode?: string;
  attributes: Record<string, SpanAttributeValue>;
}

/**
 * What a chat request's span is built from. Deliberately has no field for prompt or completion
 * text, so none can reach a collector by way of this type.
 */
export interface ChatSpanInput {
  /** The GenAI operation (`chat`, `embeddings`, `generate_content`, `rerank`); default `chat`. */
  operation?: string;
  requestId: string;
  /** The model the caller asked for, e.g. `anthropic/claude-sonnet-4`. */
  requestedModel: string;
  /** The model that answered, when one did. */
  servedModel?: string | null;
  /** The provider id that answered (or last failed), e.g. `anthropic`. */
  provider?: string | null;
  inputTokens?: number | null;
  outputTokens?: number | null;
  cachedTokens?: number | null;
  finishReason?: string | null;
  /** Upstream attempts made, fallbacks and retries included. */
  attempts: number;
  costMicros?: number | null;
  ttftMs?: number | null;
  durationMs: number;
  /** The HTTP status the gateway answered with. */
  httpStatus: number;
  /** The gateway error code when the request failed. */
  errorCode?: string | null;
  stream: boolean;
  /** The guardrail verdict as JSON (`[{rule_id, name, category, stage}]`), when a rule fired; never the text. */
  guardrails?: string | null;
}

/**
 * The attributes of a chat request's span: the OpenTelemetry GenAI names where one exists, and
 * `gateway.*` for what only Tollgate knows. Fields are copied one by one, never spread, so an
 * extra property on the input (a prompt, say) can never leak into the span.
 */
export function chatSpanAttributes(input: ChatSpanInput): Record<string, SpanAttributeValue> {
  return {
    'gen_ai.operation.name': input.operation ?? 'chat',
    'gen_ai.provider.name': input.provider,
    'gen_ai.request.model': input.requestedModel,
    'gen_ai.response.model': input.servedModel,
    'gen_ai.usage.input_tokens': input.inputTokens,
    'gen_ai.usage.output_tokens': input.outputTokens,
    // The GenAI name for cache reads (experimental); `gateway.cached_tokens` below is the stable one.
    'gen_ai.usage.cache_read.input_tokens': input.cachedTokens,
    'gen_ai.response.finish_reasons': input.finishReason ? [input.finishReason] : undefined,
    'gateway.request_id': input.requestId,
    'gateway.stream': input.stream,
    'gateway.attempts': input.attempts,
    'gateway.cost_micros': input.costMicros,
    // Whole milliseconds, so the key keeps one value type (intValue) across spans.
    'gateway.ttft_ms': roundMs(input.ttftMs),
    'gateway.duration_ms': roundMs(input.durationMs),
    'gateway.cached_tokens': input.cachedTokens,
    'gateway.status_code': input.httpStatus,
    'error.type': input.errorCode ?? undefined,
    'gateway.guardrails': input.guardrails ?? undefined,
  };
}

/** The whole span of a chat request, named and given a status from the input. */
export function chatRequestSpan(input: ChatSpanInput & { startMs: number; endMs: number }): RequestSpan {
  const span: RequestSpan = {
    name: `${input.operation ?? 'chat'} ${input.requestedModel}`,
    requestId: input.requestId,
    startMs: input.startMs,
    endMs: input.endMs,
    status: input.errorCode ? 'error' : 'ok',
    attributes: chatSpanAttributes(input),
  };
  if (input.errorCode) span.errorCode = input.errorCode;
  return span;
}

function roundMs(ms: number | null | undefined): number | undefined {
  return ms == null || !Number.isFinite(ms) ? undefined : Math.round(ms);
}

/** Where spans go; `null` when no collector is configured. */
export interface SpanSink {
  export(span: RequestSpan): void;
}
