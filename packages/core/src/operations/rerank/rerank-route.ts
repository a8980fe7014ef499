import { z } from 'zod';
import { defineInferenceRoute } from '../../pipeline/define-inference-route.js';
import { gatewayObjectSchema } from '../gateway-object-schema.js';
import { rerankOperation } from './rerank-operation.js';

/** Most documents one rerank request may carry. */
const MAX_RERANK_DOCUMENTS = 10_000;

/** The Cohere/Jina rerank request, validated shallowly: other fields pass through. */
const rerankRequestSchema = z
  .looseObject({
    model: z.string('must be a string').min(1, 'must be a non-empty string'),
    query: z.string('must be a string').min(1, 'must be a non-empty string'),
    documents: z
      .array(
        z.union(
          [z.string(), z.looseObject({ text: z.string() })],
          'must be a string or an object with "text"',
        ),
        'must be an array of documents',
      )
      .min(1, 'must have at least one document')
      .max(MAX_RERANK_DOCUMENTS, `must have at most ${MAX_RERANK_DOCUMENTS} documents`),
    top_n: z.int('must be a whole number').positive('must be positive').optional(),
    return_documents: z.boolean('must be a boolean').optional(),
    metadata: z.unknown().optional(),
  })
  .meta({ id: 'RerankRequest' });

const rerankResponseSchema = z
  .looseObject({
    id: z.string(),
    model: z.string(),
    results: z.array(
      z.object({
        index: z.int(),
        relevance_score: z.number(),
        document: z.object({ text: z.string() }).optional(),
      }),
    ),
    usage: z.object({ search_units: z.int() }),
    gateway: gatewayObjectSchema,
  })
  .meta({ id: 'RerankResponse' });

/** `POST /v1/rerank`: the metered pipeline with the rerank operation. */
export const rerankRoute = defineInferenceRoute(rerankOperation, {
  operationId: 'createRerank',
  summary: 'Rerank documents against a query, routed and metered per search unit',
  body: rerankRequestSchema,
  responses: {
    200: {
      description: 'The documents by relevance with the `gateway` object',
      schema: rerankResponseSchema,
    },
  },
});
