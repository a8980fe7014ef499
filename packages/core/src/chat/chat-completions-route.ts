import type { AuthContext } from '../auth/authenticate.js';
import { completionCeiling, estimateWorstCase } from '../billing/estimate-worst-case.js';
import { reserveCredit } from '../billing/reserve-credit.js';
import { GatewayError } from '../errors/gateway-error.js';
import { defineRoute, type GatewayDeps } from '../http/route.js';
import { tooLarge } from '../http/size-caps.js';
import { withIdempotency } from '../protections/idempotency.js';
import type { ChatRequest } from '../providers/chat-types.js';
import {
  closeRecord,
  exportRequestSpan,
  failRecord,
  startRequestRecord,
  writeRequestRecord,
} from '../records/request-log.js';
import { planRoutes, readRoutingPreferences } from '../routing/plan-routes.js';
import type { RequestRecord } from '../storage/metering-types.js';
import type { ChatCall } from './chat-call.js';
import { chatCompletionResponseSchema, chatRequestSchema } from './chat-request-schema.js';
import { completeChat } from './complete-chat.js';
import { countAttachments, largestAttachment } from './count-attachments.js';
import { readMetadata } from './metadata.js';
import { streamChat } from './stream-chat.js';

/**
 * `POST /v1/chat/completions`, stage by stage: labels → plan routes → pre-flight (reserve the
 * worst case) → call providers (stream or not) → settle → span. A refusal before the pre-flight is
 * recorded and never charged; from the reservation on, every path settles exactly once.
 */
export const chatCompletionsRoute = defineRoute({
  method: 'POST',
  path: '/v1/chat/completions',
  operationId: 'createChatCompletion',
  summary: 'Chat completion, routed, metered and (optionally) streamed as server-sent events',
  tag: 'Inference',
  access: 'inference',
  body: chatRequestSchema,
  responses: {
    200: {
      description:
        'The completion with the `gateway` object (or, with `stream: true`, an SSE stream of chunks)',
      schema: chatCompletionResponseSchema,
    },
  },
  async handle({ request, requestId, body, auth, deps }) {
    const chat = body as ChatRequest;
    const startedAt = deps.now();
    const record = startRequestRecord({
      requestId,
      auth,
      endpoint: 'chat.completions',
      requestedModel: chat.model,
      stream: chat.stream === true,
      startedAt,
    });
    record.attachments = countAttachments(chat.messages);

    const run = () => runChat(deps, record, { request, requestId, chat, auth, startedAt });
    const idempotencyKey = chat.stream === true ? null : request.headers.get('idempotency-key');
    if (idempotencyKey === null) return run();
    return withIdempotency(deps, auth, requestId, idempotencyKey, {
      run,
      onRefused: (error) => recordRefusal(deps, record, error),
      onReplay: async () => {
        record.status = 'replayed';
        closeRecord(record, deps.now());
        await insertRecord(deps, record);
      },
    });
  },
  async onRefused({ requestId, auth, deps, body }, error) {
    const model =
      typeof (body as { model?: unknown } | undefined)?.model === 'string'
        ? (body as { model: string }).model
        : null;
    const record = startRequestRecord({
      requestId,
      auth,
      endpoint: 'chat.completions',
      requestedModel: model,
      stream: false,
      startedAt: deps.now(),
    });
    await recordRefusal(deps, record, error);
  },
});

/** Plans, reserves and calls: from the reservation on, every path settles exactly once. */
async function runChat(
  deps: GatewayDeps,
  record: RequestRecord,
  input: { request: Request; requestId: string; chat: ChatRequest; auth: AuthContext; startedAt: number },
): Promise<Response> {
  const { request, requestId, chat, auth, startedAt } = input;
  let call: ChatCall;
  try {
    const attachment = largestAttachment(chat.messages);
    if (attachment > deps.maxAttachmentBytes)
      throw tooLarge('Attachment', attachment, deps.maxAttachmentBytes);
    record.metadata = readMetadata(chat.metadata, {
      referer: request.headers.get('http-referer'),
      title: request.headers.get('x-title'),
    });
    const plan = planRoutes(deps.catalogue, readRoutingPreferences(chat, deps.catalogue.providers.keys()), {
      usesTools: Array.isArray(chat.tools) && chat.tools.length > 0,
      observe: (key) => deps.endpointStats.get(key),
    });
    record.model = plan.requested.id;
    const worstCase = estimateWorstCase(
      chat,
      plan.routes.map((r) => r.endpoint.pricing),
      completionCeiling(chat, Math.max(...plan.routes.map((r) => r.model.maxOutputTokens))),
    );
    const reservation = await reserveCredit(deps.storage, {
      auth,
      requestId,
      worstCase,
      now: startedAt,
      ttlMs: deps.reservationTtlMs,
      record,
    });
    deps.observers.holdTaken(requestId);
    call = {
      requestId,
      body: chat,
      auth,
      deps,
      record,
      plan,
      reservation,
      worstCase,
      signal: request.signal,
      startedAt,
    };
  } catch (error) {
    if (error instanceof GatewayError) await recordRefusal(deps, record, error);
    throw error;
  }
  return chat.stream === true ? streamChat(call) : completeChat(call);
}

/** A request refused before it held any credit: recorded with its code and a span; never charged. */
async function recordRefusal(deps: GatewayDeps, record: RequestRecord, error: GatewayError): Promise<void> {
  failRecord(record, error, 'refused');
  closeRecord(record, deps.now());
  await insertRecord(deps, record);
}

async function insertRecord(deps: GatewayDeps, record: RequestRecord): Promise<void> {
  await writeRequestRecord(deps.storage, deps.logger, record);
  exportRequestSpan(deps, record, record.requestedModel ?? record.model ?? 'unknown');
}
