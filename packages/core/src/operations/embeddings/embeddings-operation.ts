import { estimateTokens, priceWorstCase } from '../../metering/estimate-worst-case.js';
import { meteredUsage } from '../../metering/usage.js';
import type { InferenceOperation } from '../../pipeline/inference-operation.js';
import type { EmbeddingsRequest, EmbeddingsResult } from '../../providers/inference-types.js';

/**
 * Tokens of an embeddings input for the pre-flight (product.md): each text as in the chat pre-flight
 * (`estimateTokens`, rounded up per text, since a provider tokenizes and bills each input on its
 * own), token arrays by their length.
 */
export function embeddingInputTokens(input: EmbeddingsRequest['input']): number {
  if (typeof input === 'string') return estimateTokens(input);
  let tokens = 0;
  for (const item of input as unknown[]) {
    if (typeof item === 'string') tokens += estimateTokens(item);
    else if (typeof item === 'number') tokens += 1;
    else if (Array.isArray(item)) tokens += item.length;
  }
  return tokens;
}

/** `POST /v1/embeddings` as a metered operation: input tokens at the `prompt` price. */
export const embeddingsOperation: InferenceOperation<EmbeddingsRequest, EmbeddingsResult> = {
  endpoint: 'embeddings',
  path: '/v1/embeddings',
  spanOperation: 'embeddings',
  modelType: 'embedding',
  capability: 'embeddings',
  idempotent: true,
  cacheable: true,
  worstCase: (body, routes) =>
    priceWorstCase(
      meteredUsage({ promptTokens: embeddingInputTokens(body.input) }),
      routes.map((r) => r.endpoint.pricing),
    ),
  call: (adapter, body, target, options) => adapter.embeddings!.embed(body, target, options),
  meter: (answer, _body, worstCase) => ({
    usage: meteredUsage({ promptTokens: answer.promptTokens ?? worstCase.usage.promptTokens }),
    producedOutput: true,
    finishReason: null,
  }),
  respond: ({ response }, _body, served, { usage }) => ({
    ...response,
    model: served.model,
    usage: response.usage ?? { prompt_tokens: usage.promptTokens, total_tokens: usage.promptTokens },
  }),
};
