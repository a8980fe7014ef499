import { DEFAULT_IMAGE_INPUT_TOKENS } from '../../catalogue/config-schema.js';
import { estimateTokens, priceWorstCase, type WorstCase } from '../../metering/estimate-worst-case.js';
import { meteredUsage } from '../../metering/usage.js';
import type { ChatRequest } from '../../providers/chat-types.js';
import type { PlannedRoute } from '../../routing/walk-routes.js';

/**
 * Most completions one request may ask an upstream to generate (`n`, `best_of`). Each multiplies
 * the output, so the worst case must too; above this the request is refused `400 invalid_request`
 * by the body schema rather than held against a figure no real client needs.
 */
export const MAX_CHOICES = 128;

/**
 * How many completions the upstream may generate: the largest of `n` and `best_of` (a multiplier
 * an OpenAI-compatible upstream may honour when it is passed through), at least 1. The schema has
 * already refused values that are not integers from 1 to {@link MAX_CHOICES}.
 */
export function choiceCount(request: ChatRequest): number {
  let count = 1;
  for (const field of ['n', 'best_of'] as const) {
    const value = request[field];
    if (typeof value === 'number' && Number.isInteger(value) && value > count) count = value;
  }
  return count;
}

/**
 * The completion tokens a request may produce, for each of the {@link choiceCount} completions it
 * asks for: the larger of `max_tokens` and `max_completion_tokens` as sent (both are forwarded, and
 * an upstream may honour either), else the model's ceiling (which the gateway then sends upstream).
 */
export function completionCeiling(request: ChatRequest, modelMaxOutputTokens: number): number {
  const asked = askedOutputTokens(request);
  return (asked ?? modelMaxOutputTokens) * choiceCount(request);
}

/**
 * The output ceiling a chat request names: the larger of its `max_tokens` and
 * `max_completion_tokens` (positive whole numbers only), else `null`.
 */
function askedOutputTokens(request: ChatRequest): number | null {
  let asked: number | null = null;
  for (const value of [request.max_tokens, request.max_completion_tokens]) {
    if (typeof value === 'number' && Number.isInteger(value) && value > 0 && value > (asked ?? 0))
      asked = value;
  }
  return asked;
}

/**
 * The chat pre-flight (product.md): prompt tokens estimated by `estimateTokens` over the serialised
 * messages and tools, each image part at the largest `image_input_tokens` among the candidate
 * models, plus the completion ceiling (the largest among them), priced at the highest rates among
 * the candidate routes.
 */
export function chatWorstCase(request: ChatRequest, routes: readonly PlannedRoute[]): WorstCase {
  const ceiling = Math.max(...routes.map((r) => r.model.maxOutputTokens ?? 0));
  const imageTokens = Math.max(...routes.map((r) => r.model.imageInputTokens));
  return estimateWorstCase(
    request,
    routes.map((r) => r.endpoint.pricing),
    completionCeiling(request, ceiling),
    imageTokens,
  );
}

/** The worst case of a chat request over route prices, given its completion ceiling and image cost. */
export function estimateWorstCase(
  request: ChatRequest,
  pricing: readonly PlannedRoute['endpoint']['pricing'][],
  completionTokens: number,
  imageTokens = DEFAULT_IMAGE_INPUT_TOKENS,
): WorstCase {
  const promptTokens = chatPromptTokens(request, imageTokens);
  return priceWorstCase(meteredUsage({ promptTokens, completionTokens }), pricing);
}

/** Content parts that carry an image, whatever the wire named them. */
const IMAGE_PARTS = new Set(['image_url', 'input_image', 'image']);

/**
 * The pre-flight's prompt tokens of a chat request: `estimateTokens` over the serialised messages
 * and tools, with each image part counted at `imageTokens` rather than at the length of its URL or
 * data (a provider bills an image by its pixels, not by how it was sent).
 */
export function chatPromptTokens(request: ChatRequest, imageTokens: number): number {
  let images = 0;
  const messages = JSON.stringify(request.messages, (_key, value: unknown) => {
    if (value && typeof value === 'object' && IMAGE_PARTS.has((value as { type?: unknown }).type as string)) {
      images++;
      return { type: (value as { type: string }).type };
    }
    return value;
  });
  return estimateTokens(messages, request.tools ? JSON.stringify(request.tools) : '') + images * imageTokens;
}
