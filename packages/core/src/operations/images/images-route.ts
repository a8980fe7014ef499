import { z } from 'zod';
import { defineInferenceRoute } from '../../pipeline/define-inference-route.js';
import { gatewayObjectSchema } from '../gateway-object-schema.js';
import { imagesOperation } from './images-operation.js';

/** Most images one request may ask for (OpenAI's own bound). */
const MAX_IMAGES = 10;

/** OpenAI's image-generation request, validated shallowly: other fields pass through. */
const imagesRequestSchema = z
  .looseObject({
    model: z.string('must be a string').min(1, 'must be a non-empty string'),
    prompt: z.string('must be a string').min(1, 'must be a non-empty string'),
    n: z
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_IMAGES, `must be at most ${MAX_IMAGES}`)
      .optional(),
    size: z.string().optional(),
    quality: z.string().optional(),
    response_format: z.enum(['url', 'b64_json']).optional(),
    metadata: z.unknown().optional(),
  })
  .meta({ id: 'ImagesRequest' });

const imagesResponseSchema = z
  .looseObject({
    created: z.int(),
    data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional() })),
    usage: z.looseObject({}).optional(),
    gateway: gatewayObjectSchema,
  })
  .meta({ id: 'ImagesResponse' });

/** `POST /v1/images/generations`: the metered pipeline with the images operation. */
export const imagesRoute = defineInferenceRoute(imagesOperation, {
  operationId: 'createImage',
  summary: 'Image generation, routed and metered per image (OpenAI request and answer)',
  body: imagesRequestSchema,
  responses: { 200: { description: 'The images with the `gateway` object', schema: imagesResponseSchema } },
});
