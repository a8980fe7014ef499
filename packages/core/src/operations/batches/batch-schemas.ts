import { z } from 'zod';
import { storedText } from '../../http/stored-text.js';

/** Most items one batch may hold. */
const MAX_BATCH_ITEMS = 10_000;

/** The endpoints a batch item may call. */
const BATCH_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings'] as const;

/** OpenAI's metadata rule: up to 16 string pairs, keys up to 64 characters, values up to 512. */
const metadataSchema = z
  .record(
    storedText().min(1, 'keys must not be empty').max(64, 'keys must be at most 64 characters'),
    storedText('values must be strings').max(512, 'values must be at most 512 characters'),
  )
  .refine((metadata) => Object.keys(metadata).length <= 16, 'must have at most 16 keys')
  .nullable();

/**
 * `POST /v1/batches`: the endpoint, the items inline, optional metadata. Each item's `body` is only
 * checked to be an object here; it is validated as the endpoint's own request, item by item, before
 * anything is stored (`checkBatchItems`).
 */
export const createBatchBody = z
  .object({
    endpoint: z.enum(BATCH_ENDPOINTS, `must be one of ${BATCH_ENDPOINTS.join(', ')}`),
    requests: z
      .array(
        z
          .object({
            custom_id: storedText()
              .min(1, 'must be a non-empty string')
              .max(512, 'must be at most 512 characters'),
            body: z.record(z.string(), z.unknown(), 'must be a JSON object'),
          })
          .strict(),
        'must be an array',
      )
      .min(1, 'must hold at least one request')
      .max(MAX_BATCH_ITEMS, `must hold at most ${MAX_BATCH_ITEMS} requests`),
    metadata: metadataSchema.optional(),
  })
  .strict();

export type CreateBatchBody = z.output<typeof createBatchBody>;

export const listBatchesQuery = z
  .object({
    limit: z.coerce.number().int('must be a whole number').min(1).max(100).default(20),
    after: z.string().min(1).optional(),
  })
  .strict();

/** The batch object (OpenAI's names; times in Unix seconds). */
export const batchViewSchema = z
  .object({
    id: z.string(),
    object: z.literal('batch'),
    endpoint: z.enum(BATCH_ENDPOINTS),
    status: z.enum(['validating', 'in_progress', 'completed', 'cancelling', 'cancelled']),
    request_counts: z.object({ total: z.int(), completed: z.int(), failed: z.int() }),
    created_at: z.int(),
    in_progress_at: z.int().nullable(),
    completed_at: z.int().nullable(),
    cancelled_at: z.int().nullable(),
    metadata: z.record(z.string(), z.string()).nullable(),
  })
  .meta({ id: 'Batch' });

export const batchListSchema = z.object({
  object: z.literal('list'),
  data: z.array(batchViewSchema),
  has_more: z.boolean(),
});

/** One line of `GET /v1/batches/{id}/results`. */
export const batchResultLineSchema = z
  .object({
    id: z.string(),
    custom_id: z.string(),
    response: z.object({ status_code: z.int(), request_id: z.string(), body: z.unknown() }).nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .meta({ id: 'BatchResultLine' });
