import { z } from 'zod';
import { defineInferenceRoute } from '../../pipeline/define-inference-route.js';
import { gatewayObjectSchema } from '../gateway-object-schema.js';
import { embeddingsOperation } from './embeddings-operation.js';

/** Most inputs one request may embed: OpenAI's limit (product.md). */
const MAX_EMBEDDING_INPUTS = 2_048;

const tokenArray = z.array(z.int('must be token ids (integers)')).min(1, 'must not be empty');

/**
 * Whether `input` holds at most {@link MAX_EMBEDDING_INPUTS} inputs: an array of texts or of
 * token-id arrays counts its items; a text, or one array of token ids, is a single input.
 */
function withinInputLimit(input: string | readonly unknown[]): boolean {
  return typeof input === 'string' || typeof input[0] === 'number' || input.length <= MAX_EMBEDDING_INPUTS;
}

/** OpenAI's embeddings request, validated shallowly: other fields pass through. */
const embeddingsRequestSchema = z
  .looseObject({
    model: z.string('must be a string').min(1, 'must be a non-empty string'),
    input: z
      .union(
        [
          z.string().min(1, 'must not be an empty string'),
          z.array(z.string().min(1, 'must not hold an empty string')).min(1, 'must not be empty'),
          tokenArray,
          z.array(tokenArray).min(1, 'must not be empty'),
        ],
        'must be a string, an array of strings, an array of token ids or an array of token-id arrays',
      )
      .refine(withinInputLimit, `must hold at most ${MAX_EMBEDDING_INPUTS} inputs`),
    encoding_format: z.enum(['float', 'base64']).optional(),
    dimensions: z.int('must be a whole number').positive('must be positive').optional(),
    user: z.string().optional(),
    metadata: z.unknown().optional(),
  })
  .meta({ id: 'EmbeddingsRequest' });

const embeddingsResponseSchema = z
  .looseObject({
    object: z.literal('list'),
    data: z.array(z.looseObject({ object: z.literal('embedding'), index: z.int() })),
    model: z.string(),
    usage: z.looseObject({ prompt_tokens: z.int(), total_tokens: z.int() }),
    gateway: gatewayObjectSchema,
  })
  .meta({ id: 'EmbeddingsResponse' });

/** `POST /v1/embeddings`: the metered pipeline with the embeddings operation. */
export const embeddingsRoute = defineInferenceRoute(embeddingsOperation, {
  operationId: 'createEmbedding',
  summary: 'Embeddings, routed and metered (OpenAI request and answer)',
  body: embeddingsRequestSchema,
  responses: {
    200: { description: 'The embeddings with the `gateway` object', schema: embeddingsResponseSchema },
  },
});
