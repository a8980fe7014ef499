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
    cost_breakdown: z.looseObject({}),
    waived: z.string().optional(),
    saved_usd: z.number().optional(),
  })
  .meta({ id: 'GatewayObject' });
