import { z } from 'zod';

/*
 * The Messages API request body we send, as strict zod schemas: every object refuses unknown keys,
 * because Anthropic answers 400 to a field it does not know. The converter's output type is
 * inferred from here, and the tests parse every converted body with `anthropicRequestSchema`.
 */

export const anthropicCacheControlSchema = z.strictObject({
  type: z.literal('ephemeral'),
  ttl: z.enum(['5m', '1h']).optional(),
});
export type AnthropicCacheControl = z.infer<typeof anthropicCacheControlSchema>;

export const anthropicTextBlockSchema = z.strictObject({
  type: z.literal('text'),
  // Anthropic refuses empty text blocks.
  text: z.string().min(1),
  cache_control: anthropicCacheControlSchema.optional(),
});
export type AnthropicTextBlock = z.infer<typeof anthropicTextBlockSchema>;

export const anthropicImageBlockSchema = z.strictObject({
  type: z.literal('image'),
  source: z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
    z.strictObject({ type: z.literal('url'), url: z.string() }),
  ]),
  cache_control: anthropicCacheControlSchema.optional(),
});
export type AnthropicImageBlock = z.infer<typeof anthropicImageBlockSchema>;

const anthropicToolUseBlockSchema = z.strictObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
});

export const anthropicToolResultBlockSchema = z.strictObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z
    .union([z.string(), z.array(z.union([anthropicTextBlockSchema, anthropicImageBlockSchema]))])
    .optional(),
});
export type AnthropicToolResultBlock = z.infer<typeof anthropicToolResultBlockSchema>;

export const anthropicRequestBlockSchema = z.discriminatedUnion('type', [
  anthropicTextBlockSchema,
  anthropicImageBlockSchema,
  anthropicToolUseBlockSchema,
  anthropicToolResultBlockSchema,
]);
export type AnthropicRequestBlock = z.infer<typeof anthropicRequestBlockSchema>;

export const anthropicRequestMessageSchema = z.strictObject({
  role: z.enum(['user', 'assistant']),
  content: z.union([z.string().min(1), z.array(anthropicRequestBlockSchema).min(1)]),
});
export type AnthropicRequestMessage = z.infer<typeof anthropicRequestMessageSchema>;

export const anthropicToolSchema = z.strictObject({
  name: z.string(),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
});
export type AnthropicTool = z.infer<typeof anthropicToolSchema>;

const disableParallel = { disable_parallel_tool_use: z.boolean().optional() };
export const anthropicToolChoiceSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auto'), ...disableParallel }),
  z.strictObject({ type: z.literal('any'), ...disableParallel }),
  z.strictObject({ type: z.literal('tool'), name: z.string(), ...disableParallel }),
  z.strictObject({ type: z.literal('none') }),
]);
export type AnthropicToolChoice = z.infer<typeof anthropicToolChoiceSchema>;

export const anthropicRequestSchema = z.strictObject({
  model: z.string(),
  max_tokens: z.number().int().positive(),
  messages: z.array(anthropicRequestMessageSchema),
  system: z.union([z.string().min(1), z.array(anthropicTextBlockSchema).min(1)]).optional(),
  stream: z.boolean().optional(),
  temperature: z.number().optional(),
  top_p: z.number().optional(),
  top_k: z.number().int().optional(),
  stop_sequences: z.array(z.string()).optional(),
  tools: z.array(anthropicToolSchema).optional(),
  tool_choice: anthropicToolChoiceSchema.optional(),
});
export type AnthropicRequest = z.infer<typeof anthropicRequestSchema>;
