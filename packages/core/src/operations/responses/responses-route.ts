import type { Catalogue } from '../../catalogue/catalogue.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { newId } from '../../ids.js';
import { defineInferenceRoute, type WireEntry } from '../../pipeline/define-inference-route.js';
import type { PlaceSystem } from '../../pipeline/place-system.js';
import type { ChatRequest } from '../../providers/chat-types.js';
import { DROPPED_TOOLS_HEADER, responsesOperation } from './responses-operation.js';
import { responseObjectSchema, responsesRequestSchema } from './responses-request-schema.js';
import { refuseStatefulFields, responsesToChat } from './responses-to-chat.js';
import type { ResponsesRequest } from './responses-types.js';

/**
 * The Responses wire entering the pipeline (product.md `POST /v1/responses`): the stateful fields
 * refused, the body translated to the chat request the pipeline runs on, and the operation made for
 * this request. Hosted tools are kept when every route of the request is native, else served by the
 * web plugin (`web_search`, with a search backend) or removed and named in `X-Gateway-Dropped-Tools`.
 */
const enterResponses: WireEntry<ChatRequest> = (body, _request, deps) => {
  const wire = body as ResponsesRequest;
  refuseStatefulFields(wire);
  const translation = responsesToChat(wire, {
    searchBackend: hasSearchBackend(deps.catalogue),
    native: everyRouteNative(wire, deps.catalogue),
  });
  const headers: Record<string, string> = {};
  if (translation.dropped.length > 0) headers[DROPPED_TOOLS_HEADER] = translation.dropped.join(',');
  const op = responsesOperation({ wire, translation, headers, now: deps.now, makeId: newId });
  return { op, body: translation.body, headers };
};

/** Whether the `web` plugin can run here: some `web-search` provider has a key. */
function hasSearchBackend(catalogue: Catalogue): boolean {
  for (const provider of catalogue.providers.values()) {
    if (provider.format === 'web-search' && provider.apiKey !== null) return true;
  }
  return false;
}

/** Whether every route the request may take (its model and its `models`) is on a native Responses provider. */
function everyRouteNative(wire: ResponsesRequest, catalogue: Catalogue): boolean {
  const ids = [wire.model, ...(Array.isArray(wire.models) ? wire.models : [])];
  return ids.every((id) => {
    const model = typeof id === 'string' ? catalogue.model(id) : undefined;
    return model?.endpoints.every((endpoint) => endpoint.provider.responses === true) === true;
  });
}

/** The operation the route is declared with; each request is served by its own (see `enterResponses`). */
const declared = responsesOperation({
  wire: { model: '', input: '' },
  translation: {
    body: { model: '', messages: [] },
    custom: new Set(),
    dropped: [],
    tools: [],
    lossless: true,
  },
  headers: {},
  now: Date.now,
  makeId: newId,
});

/** A preset's `system` on the Responses wire: before the request's own `instructions`. */
export const instructionsFirst: PlaceSystem = (merged, system) => {
  const own =
    typeof merged.instructions === 'string' && merged.instructions !== '' ? merged.instructions : null;
  merged.instructions = own === null ? system : `${system}\n\n${own}`;
};

/** `POST /v1/responses`: the metered pipeline behind the Responses wire, JSON or SSE events. */
const responsesRoute = defineInferenceRoute(declared, {
  operationId: 'createResponse',
  summary: 'OpenAI Responses API (stateless): routed, metered and (optionally) streamed as Responses events',
  body: responsesRequestSchema,
  responses: {
    200: {
      description:
        'The Response with the `gateway` object (or, with `stream: true`, an SSE stream of Responses events ending in `response.completed`, `response.incomplete` or `response.failed`). Header `X-Gateway-Dropped-Tools` names hosted tools a translated route went without.',
      schema: responseObjectSchema,
    },
  },
  enter: enterResponses as WireEntry<never>,
  placeSystem: instructionsFirst,
});

/**
 * `GET /v1/responses/{id}`: the gateway keeps no responses, so there is never one to return: `404`
 * with or without a key (there is nothing a key could unlock).
 */
const getResponseRoute = defineRoute({
  method: 'GET',
  path: '/v1/responses/{id}',
  operationId: 'getResponse',
  summary: 'Always 404: the gateway is stateless and keeps no responses',
  tag: 'Inference',
  access: 'public',
  responses: { 404: { description: 'The gateway keeps no responses' } },
  handle() {
    throw new GatewayError(
      'not_found',
      'This gateway is stateless: it keeps no responses, so none can be retrieved. Send the full history with each request.',
    );
  },
});

export const responsesRoutes = [responsesRoute, getResponseRoute];
