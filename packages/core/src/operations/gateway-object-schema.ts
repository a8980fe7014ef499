import { z } from 'zod';

/** The `gateway` object every inference answer carries (for `/api/openapi.json`). */
export const gatewayObjectSchema = z
  .looseObject({
    request_id: z.string(),
    cost_micros: z.int(),
    cost_usd: z.number(),
    model: z.string(),
    provider: z.string(),
    attempts: z.int(),
    cost_breakdown: z
      .looseObject({
        tokens_micros: z.int(),
        tokens_usd: z.number(),
        web_search_micros: z.int(),
        web_search_usd: z.number(),
      })
      .describe('The total split into model tokens and non-token charges (the web search fee).'),
    waived: z.enum(['byok', 'zero_completion', 'cache hit']).optional(),
    saved_usd: z.number().optional(),
    transforms: z
      .array(z.object({ id: z.string(), dropped_messages: z.int() }))
      .optional()
      .describe('What the requested transforms did (`middle-out`: how many messages it dropped).'),
  })
  .meta({ id: 'GatewayObject' });
