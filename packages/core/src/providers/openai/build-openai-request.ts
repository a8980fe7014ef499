import type { ChatRequest } from '../chat-types.js';
import { GATEWAY_FIELDS, type UpstreamTarget } from '../provider-adapter.js';

/**
 * The body sent to an OpenAI-format upstream: the caller's request with `model` set to the
 * upstream's name and the gateway-owned fields removed. Every other field (tools, vendor fields the
 * gateway has never heard of) passes through untouched, and nested values are shared, not copied.
 *
 * A request with neither `max_tokens` nor `max_completion_tokens` gets the ceiling it was held
 * against (`target.maxOutputTokens`) in the field the provider takes (`max_tokens_field`).
 *
 * `stream` and `stream_options` follow the call, not the caller: a streamed call sends
 * `stream: true` with `stream_options.include_usage: true` merged into whatever stream options the
 * caller set, so the provider reports usage for metering; a non-streamed call drops both, since
 * upstreams refuse `stream_options` without `stream` and the gateway decided how to call.
 */
export function buildOpenAIRequest(
  request: ChatRequest,
  target: UpstreamTarget,
  mode: { stream: boolean },
): Record<string, unknown> {
  const body = upstreamBody(request, target);
  // With no ceiling of its own, the request is held against the model's: send that, so the
  // upstream cannot generate past the hold.
  if (
    body.max_tokens === undefined &&
    body.max_completion_tokens === undefined &&
    target.maxOutputTokens > 0
  ) {
    body[target.provider.maxTokensField ?? 'max_tokens'] = target.maxOutputTokens;
  }
  if (mode.stream) {
    body.stream = true;
    body.stream_options = { ...asObject(request.stream_options), include_usage: true };
  } else {
    delete body.stream;
    delete body.stream_options;
  }
  return body;
}

/**
 * The caller's request as an OpenAI-format upstream takes it, whatever the endpoint: `model` set to
 * the upstream's name and the gateway-owned fields removed; every other field (`encoding_format`,
 * `response_format`, vendor fields) passes through untouched, nested values shared, not copied.
 */
export function upstreamBody(request: object, target: UpstreamTarget): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request, model: target.upstreamModel };
  for (const field of GATEWAY_FIELDS) delete body[field];
  return body;
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
