import { defineInferenceRoute } from '../../pipeline/define-inference-route.js';
import type { InferenceBody, InferenceOperation } from '../../pipeline/inference-operation.js';
import type { PlaceSystem } from '../../pipeline/place-system.js';
import { chatOperation } from '../chat/chat-operation.js';
import { MESSAGES_ENDPOINT, messagesOperation } from './messages-operation.js';
import {
  type MessagesRequest,
  messagesRequestSchema,
  messagesResponseSchema,
} from './messages-request-schema.js';
import { messagesToChat } from './messages-to-chat.js';
import { readAnthropicKey } from './read-anthropic-key.js';
import { anthropicErrorSchema, renderMessagesError } from './render-messages-error.js';

/** A preset's `system` on the Messages wire: the first block of the top-level `system`, before the request's own. */
const systemFirst: PlaceSystem = (merged, system) => {
  const own = merged.system;
  if (own === undefined || own === '') merged.system = system;
  else {
    const blocks = typeof own === 'string' ? [{ type: 'text', text: own }] : Array.isArray(own) ? own : [];
    merged.system = [{ type: 'text', text: system }, ...blocks];
  }
};

/**
 * The Anthropic wire's route options: its key headers, its error body, its place for a preset's
 * system, and the body as sent (its keys in the caller's order, for the pass-through).
 */
export const ANTHROPIC_WIRE = {
  bodyAsSent: true,
  readApiKey: readAnthropicKey,
  renderError: renderMessagesError,
  errorBody: anthropicErrorSchema,
  placeSystem: systemFirst,
} as const;

/**
 * `POST /v1/messages` (Anthropic Messages API): the skin converts the wire at the edge — the body to
 * its chat translation, the request to its own operation (`messagesOperation`), which passes the
 * caller's body through on an Anthropic route — and the metered pipeline does the rest, as for
 * chat. The route's own operation (chat's, as the Messages endpoint) only names the refusals'
 * records: every request enters through `enter`.
 */
export const messagesRoute = defineInferenceRoute(
  { ...chatOperation, ...MESSAGES_ENDPOINT },
  {
    operationId: 'createMessage',
    summary: 'Anthropic Messages API: routed, metered, passed through to Anthropic or translated',
    body: messagesRequestSchema,
    responses: {
      200: {
        description:
          'A Messages answer with the `gateway` object (or, with `stream: true`, an SSE stream of Anthropic events)',
        schema: messagesResponseSchema,
      },
    },
    ...ANTHROPIC_WIRE,
    enter(wire, request) {
      const body = wire as MessagesRequest;
      const translated = messagesToChat(body);
      const op = messagesOperation({
        wire: body,
        translated,
        version: request.headers.get('anthropic-version'),
        beta: request.headers.get('anthropic-beta'),
      });
      // The pipeline is generic over the body; this operation's body is the chat translation.
      return { op: op as unknown as InferenceOperation<InferenceBody>, body: translated.chat };
    },
  },
);
