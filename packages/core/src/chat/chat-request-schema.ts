import { z } from 'zod';
import { MAX_CHOICES } from '../billing/estimate-worst-case.js';

/** `n` and `best_of` multiply the output (and so the worst case): whole numbers from 1 to MAX_CHOICES. */
const choices = z
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(MAX_CHOICES, `must be at most ${MAX_CHOICES}`)
  .optional();

/**
 * Shallow validation of `POST /v1/chat/completions` (spec: "Validation beyond `model` and
 * `messages` is deliberately shallow"): every other field passes through to the provider.
 */
export const chatRequestSchema = z
  .looseObject({
    model: z.string('must be a string').min(1, 'must be a non-empty string'),
    messages: z
      .array(z.looseObject({ role: z.string('must be a string') }), 'must be an array of messages')
      .min(1, 'must have at least one message'),
    stream: z.boolean('must be a boolean').optional(),
    tools: z.array(z.looseObject({}), 'must be an array').optional(),
    n: choices,
    best_of: choices,
    metadata: z.unknown().optional(),
  })
  .meta({ id: 'ChatCompletionRequest' });

export const chatCompletionResponseSchema = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    model: z.string(),
    choices: z.array(z.looseObject({})),
    usage: z.looseObject({}).optional(),
    gateway: z.looseObject({
      request_id: z.string(),
      cost_micros: z.int(),
      cost_usd: z.number(),
      model: z.string(),
      provider: z.string(),
      attempts: z.int(),
      cost_breakdown: z.looseObject({}),
      waived: z.string().optional(),
      saved_usd: z.number().optional(),
    }),
  })
  .meta({ id: 'ChatCompletion' });
