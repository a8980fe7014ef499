import { defineInferenceRoute } from '../../pipeline/define-inference-route.js';
import { chatOperation } from './chat-operation.js';
import { chatCompletionResponseSchema, chatRequestSchema } from './chat-request-schema.js';

/** `POST /v1/chat/completions`: the metered pipeline with chat's operation, JSON or SSE. */
export const chatCompletionsRoute = defineInferenceRoute(chatOperation, {
  operationId: 'createChatCompletion',
  summary: 'Chat completion, routed, metered and (optionally) streamed as server-sent events',
  body: chatRequestSchema,
  responses: {
    200: {
      description:
        'The completion with the `gateway` object (or, with `stream: true`, an SSE stream of chunks)',
      schema: chatCompletionResponseSchema,
    },
  },
});
