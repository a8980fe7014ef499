import { z } from 'zod';
import { gatewayObjectSchema } from '../gateway-object-schema.js';

/*
 * The Anthropic Messages API request, validated shallowly (as the spec validates chat): what the
 * gateway reads must have its shape, everything else passes through untouched, so a block type or a
 * field Anthropic adds tomorrow reaches an Anthropic route unchanged.
 */

/** A content block: any object with a `type` (`text`, `image`, `tool_use`, `thinking`, …). */
const block = z.looseObject({ type: z.string('must be a string') });

const content = z.union(
  [z.string(), z.array(block, 'must be an array of content blocks')],
  'must be a string or an array of content blocks',
);

// Claude Code also sends `system` turns mid-conversation (its environment notes).
const message = z.looseObject({
  role: z.enum(['user', 'assistant', 'system'], 'must be "user", "assistant" or "system"'),
  content,
});

const messagesBody = {
  model: z.string('must be a string').min(1, 'must be a non-empty string'),
  messages: z.array(message, 'must be an array of messages').min(1, 'must have at least one message'),
  system: z.union([z.string(), z.array(block)], 'must be a string or an array of text blocks').optional(),
  tools: z.array(z.looseObject({ name: z.string('must be a string') }), 'must be an array').optional(),
  tool_choice: z.looseObject({ type: z.string('must be a string') }).optional(),
  stop_sequences: z.array(z.string(), 'must be an array of strings').optional(),
  temperature: z.number('must be a number').optional(),
  top_p: z.number('must be a number').optional(),
  metadata: z.unknown().optional(),
};

/** `POST /v1/messages`. */
export const messagesRequestSchema = z
  .looseObject({
    ...messagesBody,
    max_tokens: z.int('must be a whole number').min(1, 'must be at least 1'),
    stream: z.boolean('must be a boolean').optional(),
  })
  .meta({ id: 'MessagesRequest' });

/** `POST /v1/messages/count_tokens`: the same body without `max_tokens` (ignored when sent). */
export const countTokensRequestSchema = z.looseObject(messagesBody).meta({ id: 'CountTokensRequest' });

/** A Messages request as validated. */
export type MessagesRequest = z.output<typeof messagesRequestSchema>;
/** A count_tokens request as validated. */
export type CountTokensRequest = z.output<typeof countTokensRequestSchema>;
/** One content block of a request, as sent. */
export type MessagesBlock = z.output<typeof block>;

export const messagesResponseSchema = z
  .looseObject({
    id: z.string(),
    type: z.literal('message'),
    role: z.literal('assistant'),
    model: z.string(),
    content: z.array(z.looseObject({ type: z.string() })),
    stop_reason: z.string().nullable(),
    usage: z.looseObject({ input_tokens: z.int(), output_tokens: z.int() }),
    gateway: gatewayObjectSchema,
  })
  .meta({ id: 'Message' });

export const countTokensResponseSchema = z
  .object({ input_tokens: z.int() })
  .meta({ id: 'CountTokensResponse' });
