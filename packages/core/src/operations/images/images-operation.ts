import { priceWorstCase } from '../../metering/estimate-worst-case.js';
import { meteredUsage } from '../../metering/usage.js';
import type { InferenceOperation } from '../../pipeline/inference-operation.js';
import type { ImagesRequest, ImagesResult } from '../../providers/inference-types.js';

/** Images asked for: `n`, default 1. */
function imagesAsked(body: ImagesRequest): number {
  return typeof body.n === 'number' ? body.n : 1;
}

/**
 * `POST /v1/images/generations` as a metered operation: held at `n` × the highest `image` price,
 * charged for the images actually returned (never more than were asked for and held).
 */
export const imagesOperation: InferenceOperation<ImagesRequest, ImagesResult> = {
  endpoint: 'images.generations',
  path: '/v1/images/generations',
  spanOperation: 'generate_content',
  modelType: 'image',
  capability: 'images',
  idempotent: true,
  worstCase: (body, routes) =>
    priceWorstCase(
      meteredUsage({ units: [{ unit: 'image', count: imagesAsked(body) }] }),
      routes.map((r) => r.endpoint.pricing),
    ),
  call: (adapter, body, target, options) => adapter.images!.generate(body, target, options),
  meter: ({ response }, body) => ({
    usage: meteredUsage({
      units: [{ unit: 'image', count: Math.min(response.data.length, imagesAsked(body)) }],
    }),
    producedOutput: true,
    finishReason: null,
  }),
  respond: ({ response }) => ({ ...response }),
};
