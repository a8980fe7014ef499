import { z } from 'zod';
import { gatewayObjectSchema } from '../gateway-object-schema.js';
import { MAX_CHOICES } from './chat-worst-case.js';

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
    gateway: gatewayObjectSchema,
  })
  .meta({ id: 'ChatCompletion' });
