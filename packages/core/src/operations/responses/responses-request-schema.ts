import { z } from 'zod';
import { gatewayObjectSchema } from '../gateway-object-schema.js';

/**
 * Shallow validation of `POST /v1/responses` (product.md): the fields the gateway reads are typed,
 * everything else is accepted (and, on a native route, passed on). Items and tools are checked
 * where they are converted, with messages naming the field (`body.input[2].call_id`).
 */
export const responsesRequestSchema = z
  .looseObject({
    model: z.string('must be a string').min(1, 'must be a non-empty string'),
    input: z.union(
      [
        z.string(),
        z.array(z.looseObject({}), 'must be an array of input items').min(1, 'must have at least one item'),
      ],
      'must be a string or an array of input items',
    ),
    instructions: z.string('must be a string').nullish(),
    tools: z
      .array(z.looseObject({ type: z.string('must be a string') }), 'must be an array of tools')
      .nullish(),
    tool_choice: z
      .union(
        [z.enum(['none', 'auto', 'required']), z.looseObject({ type: z.string() })],
        'must be "none", "auto", "required" or an object naming a tool',
      )
      .nullish(),
    parallel_tool_calls: z.boolean('must be a boolean').nullish(),
    max_output_tokens: z.int('must be a whole number').min(1, 'must be at least 1').nullish(),
    temperature: z.number('must be a number').nullish(),
    top_p: z.number('must be a number').nullish(),
    text: z
      .looseObject(
        { format: z.looseObject({ type: z.string('must be a string') }).optional() },
        'must be an object',
      )
      .nullish(),
    reasoning: z
      .looseObject({ effort: z.string('must be a string').nullish() }, 'must be an object')
      .nullish(),
    metadata: z.record(z.string(), z.unknown(), 'must be an object').nullish(),
    stream: z.boolean('must be a boolean').nullish(),
    store: z.boolean('must be a boolean').nullish(),
    background: z.boolean('must be a boolean').nullish(),
    previous_response_id: z.string().nullish().describe('Refused: the gateway is stateless.'),
    conversation: z.unknown().optional().describe('Refused: the gateway is stateless.'),
  })
  .meta({ id: 'ResponsesRequest' });

/** An output item as the answer carries it (`message`, `function_call`, `custom_tool_call`, …). */
const outputItemSchema = z.looseObject({ type: z.string(), id: z.string(), status: z.string().optional() });

/** The Response object of `POST /v1/responses`, for `/api/openapi.json`. */
export const responseObjectSchema = z
  .looseObject({
    id: z.string().describe('`resp_…`, unique per request'),
    object: z.literal('response'),
    created_at: z.int(),
    status: z.enum(['completed', 'incomplete', 'failed', 'in_progress']),
    model: z.string(),
    output: z.array(outputItemSchema),
    incomplete_details: z.looseObject({ reason: z.string() }).nullable(),
    error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
    usage: z
      .looseObject({
        input_tokens: z.int(),
        input_tokens_details: z.looseObject({ cached_tokens: z.int() }),
        output_tokens: z.int(),
        output_tokens_details: z.looseObject({ reasoning_tokens: z.int() }),
        total_tokens: z.int(),
      })
      .nullable(),
    gateway: gatewayObjectSchema,
  })
  .meta({ id: 'Response' });
