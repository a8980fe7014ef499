import { z } from 'zod';

/*
 * What the Anthropic Messages API sends back, as zod schemas. Lenient on purpose: every object is
 * loose (Anthropic adds fields often), counts may be missing or null, and block, delta and event
 * types we do not translate are kept as `{ type: 'other' }` instead of failing the parse. Only the
 * fields the converters read are required.
 */

const tokenCount = z.number().nullish();

export const anthropicUsageSchema = z.looseObject({
  input_tokens: tokenCount,
  output_tokens: tokenCount,
  cache_creation_input_tokens: tokenCount,
  cache_read_input_tokens: tokenCount,
});
export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;

/** A schema for "any `type` not in `known`", turned into `{ type: 'other' }` so switches stay exhaustive. */
function otherType(known: readonly string[]) {
  return z
    .looseObject({ type: z.string().refine((type) => !known.includes(type)) })
    .transform((value) => ({ type: 'other' as const, originalType: value.type }));
}

const anthropicContentBlockSchema = z.union([
  z.looseObject({ type: z.literal('text'), text: z.string() }),
  z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
  // thinking, redacted_thinking, server_tool_use, web_search_tool_result, ...
  otherType(['text', 'tool_use']),
]);

/** A non-streaming Messages response. */
export const anthropicMessageSchema = z.looseObject({
  id: z.string(),
  model: z.string(),
  content: z.array(anthropicContentBlockSchema),
  stop_reason: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});
export type AnthropicMessage = z.infer<typeof anthropicMessageSchema>;

/** The error envelope of a non-2xx answer and of a streamed `error` event. */
export const anthropicErrorSchema = z.looseObject({
  type: z.literal('error').optional(),
  error: z.looseObject({ type: z.string().optional(), message: z.string() }),
});

const blockDeltaSchema = z.union([
  z.looseObject({ type: z.literal('text_delta'), text: z.string() }),
  z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() }),
  // thinking_delta, signature_delta, citations_delta, ...
  otherType(['text_delta', 'input_json_delta']),
]);

const KNOWN_EVENTS = [
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
] as const;

/** One event of a streamed Messages response (the JSON `data` of one SSE event). */
export const anthropicStreamEventSchema = z.union([
  z.looseObject({
    type: z.literal('message_start'),
    message: z.looseObject({ id: z.string(), model: z.string(), usage: anthropicUsageSchema.nullish() }),
  }),
  z.looseObject({
    type: z.literal('content_block_start'),
    index: z.number(),
    content_block: z.union([
      z.looseObject({ type: z.literal('text'), text: z.string().optional() }),
      z.looseObject({ type: z.literal('tool_use'), id: z.string(), name: z.string(), input: z.unknown() }),
      otherType(['text', 'tool_use']),
    ]),
  }),
  z.looseObject({ type: z.literal('content_block_delta'), index: z.number(), delta: blockDeltaSchema }),
  z.looseObject({ type: z.literal('content_block_stop'), index: z.number() }),
  z.looseObject({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullish() }),
    usage: anthropicUsageSchema.nullish(),
  }),
  z.looseObject({ type: z.literal('message_stop') }),
  z.looseObject({ type: z.literal('ping') }),
  anthropicErrorSchema.extend({ type: z.literal('error') }),
  otherType(KNOWN_EVENTS),
]);
export type AnthropicStreamEvent = z.infer<typeof anthropicStreamEventSchema>;
