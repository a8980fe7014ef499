import { estimateTokens, priceWorstCase, type WorstCase } from '../../metering/estimate-worst-case.js';
import type { ServedView } from '../../metering/price-usage.js';
import { estimatedUsage, type MeteredUsage, meteredUsage } from '../../metering/usage.js';
import type { InferenceOperation, StreamingOperation } from '../../pipeline/inference-operation.js';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatRequest,
  TokenUsage,
} from '../../providers/chat-types.js';
import type { CompletionResult, ProviderAdapter, UpstreamTarget } from '../../providers/provider-adapter.js';
import type { PlannedRoute } from '../../routing/walk-routes.js';
import { chatOperation } from '../chat/chat-operation.js';
import { chunksAsCompletion } from '../chat/chat-replay.js';
import { chatWorstCase } from '../chat/chat-worst-case.js';
import { completionOutput, type MakeId, reasoningTokensOf } from './chat-to-response.js';
import { nativeFinishReason, nativeOutputCharacters, nativeProducedOutput } from './native-answer.js';
import { responseAsEvents } from './response-as-events.js';
import { responseEnd, responseShell, responsesUsage } from './response-object.js';
import { isChatChunk, type ResponsesChunk, responsesStreamWriter } from './responses-stream-writer.js';
import type { Translation } from './responses-to-chat.js';
import type { ResponsesRequest } from './responses-types.js';

type Json = Record<string, unknown>;

/** What one attempt answered: a chat completion to convert (translated) or the upstream's own Response (native). */
type ResponsesAnswer =
  | { kind: 'chat'; result: CompletionResult }
  | { kind: 'native'; response: Json; usage: TokenUsage | null };

/** The header naming the hosted tools a translated route went without. */
export const DROPPED_TOOLS_HEADER = 'X-Gateway-Dropped-Tools';

/** One Responses request, as its operation needs it. */
interface ResponsesCall {
  wire: ResponsesRequest;
  translation: Translation;
  /** The answer's headers: the dropped-tools header stays only while a translated route serves. */
  headers: Record<string, string>;
  now: () => number;
  makeId: MakeId;
}

/** A request's Response id: `resp_` and its request id's unique part, so it is unique per request. */
const responseIdOf = (requestId: string) => `resp_${requestId.replace(/^req_/, '')}`;

const ITEM_PREFIXES: Record<string, string> = {
  message: 'msg',
  function_call: 'fc',
  custom_tool_call: 'ctc',
  reasoning: 'rs',
};

/**
 * `POST /v1/responses` as a metered operation, made for one request (it closes over the request's
 * Responses body): the pipeline runs on the chat request it translates to (`responsesToChat`), so
 * routing, guardrails, the web plugin, transforms, the hold and the cache key are chat's. Each
 * attempt goes native when its provider has `responses: true` (the Responses body itself, through
 * the adapter's `responses` capability) and through the adapter's chat call otherwise — the chat
 * body with its output ceiling in the provider's field. The answer is a Response either way.
 */
export function responsesOperation(call: ResponsesCall): InferenceOperation<ChatRequest, ResponsesAnswer> {
  const { wire, translation, headers, now, makeId } = call;
  const native = (target: UpstreamTarget, adapter: ProviderAdapter) =>
    target.provider.responses === true && adapter.responses !== undefined;
  /** Which kind of route serves: the dropped-tools header holds only for a translated one. */
  const served = (kind: ResponsesAnswer['kind']) => {
    if (kind === 'native') delete headers[DROPPED_TOOLS_HEADER];
    else if (translation.dropped.length > 0) headers[DROPPED_TOOLS_HEADER] = translation.dropped.join(',');
  };
  const chatResponse = (completion: ChatCompletion, usage: MeteredUsage, id: string, model: string) => {
    const ending = responseEnd(completion.choices[0]?.finish_reason ?? null);
    const createdAt = now();
    return {
      ...responseShell(wire, translation.tools, { id, model, createdAt }),
      status: ending.status,
      completed_at: ending.status === 'completed' ? Math.floor(createdAt / 1000) : null,
      incomplete_details: ending.incomplete_details,
      output: completionOutput(
        completion,
        translation.custom,
        ending.status === 'completed' ? 'completed' : 'incomplete',
        makeId,
      ),
      usage: responsesUsage(usage, reasoningTokensOf(completion)),
    };
  };

  const stream: StreamingOperation<ChatRequest, ResponsesChunk> = {
    async open(adapter, body, target, options) {
      if (native(target, adapter)) {
        const opened = await adapter.responses!.stream(wire, target, options);
        served('native');
        return opened;
      }
      const opened = await adapter.chat!.stream(forTarget(body, target), target, options);
      served('chat');
      return opened;
    },
    writer: (view) =>
      responsesStreamWriter(
        {
          wire,
          tools: translation.tools,
          custom: translation.custom,
          makeId,
          now,
          responseId: responseIdOf(view.requestId),
        },
        view,
      ),
    replay: responseAsEvents,
    assemble(chunks, servedModel, usage) {
      const terminal = chunks.find(
        (chunk) =>
          !isChatChunk(chunk) &&
          (chunk.type === 'response.completed' || chunk.type === 'response.incomplete'),
      );
      if (terminal && !isChatChunk(terminal)) return terminal.response as Json;
      const completion = chunksAsCompletion(chunks as ChatCompletionChunk[], servedModel, usage);
      return chatResponse(completion as unknown as ChatCompletion, usage, makeId('resp'), servedModel);
    },
  };

  return {
    endpoint: 'responses',
    path: '/v1/responses',
    spanOperation: 'chat',
    modelType: 'chat',
    capability: 'chat',
    idempotent: true,
    streams: chatOperation.streams,
    usesTools: chatOperation.usesTools,
    attachments: chatOperation.attachments,
    transform: chatOperation.transform,
    // What the chat body lost (a reasoning item, a hosted tool) would be missing from its key.
    cacheable: translation.lossless,
    webPlugin: true,
    worstCase: (body, routes) => worstCase(wire, translation, body, routes),
    async call(adapter, body, target, options): Promise<ResponsesAnswer> {
      if (native(target, adapter)) {
        const answer = await adapter.responses!.create(wire, target, options);
        served('native');
        return { kind: 'native', ...answer };
      }
      const result = await adapter.chat!.complete(forTarget(body, target), target, options);
      served('chat');
      return { kind: 'chat', result };
    },
    meter(answer, body, worst) {
      if (answer.kind === 'chat') return chatOperation.meter(answer.result, body, worst);
      const { response, usage } = answer;
      return {
        usage: usage
          ? meteredUsage(usage)
          : estimatedUsage(worst.usage, null, nativeOutputCharacters(response)),
        producedOutput: nativeProducedOutput(response),
        finishReason: nativeFinishReason(response),
      };
    },
    respond(answer, _body, view, metered) {
      if (answer.kind === 'native') return answer.response;
      return chatResponse(answer.result.completion, metered.usage, responseIdOf(view.requestId), view.model);
    },
    recall(answer, view: ServedView) {
      const output = Array.isArray(answer.output) ? (answer.output as Json[]) : [];
      return {
        ...answer,
        id: responseIdOf(view.requestId),
        created_at: Math.floor(now() / 1000),
        metadata: wire.metadata ?? {},
        output: output.map((item) => ({ ...item, id: makeId(ITEM_PREFIXES[String(item.type)] ?? 'item') })),
      };
    },
    stream: stream as StreamingOperation<ChatRequest, unknown>,
  };
}

/**
 * The chat body for one translated attempt: its output ceiling (`max_tokens`, from
 * `max_output_tokens`) in the field the provider takes (`max_tokens_field`).
 */
function forTarget(body: ChatRequest, target: UpstreamTarget): ChatRequest {
  const field = target.provider.maxTokensField ?? 'max_tokens';
  if (field === 'max_tokens' || body.max_tokens === undefined) return body;
  const { max_tokens, ...rest } = body;
  return { ...rest, [field]: max_tokens };
}

/**
 * Chat's worst case over the chat body; when the translation left something out (a reasoning item
 * a native route still receives), the prompt is held at the larger of that and the Responses
 * input's own estimate.
 */
function worstCase(
  wire: ResponsesRequest,
  translation: Translation,
  body: ChatRequest,
  routes: readonly PlannedRoute[],
): WorstCase {
  const chat = chatWorstCase(body, routes);
  if (translation.lossless) return chat;
  const promptTokens = estimateTokens(
    JSON.stringify(wire.input),
    typeof wire.instructions === 'string' ? wire.instructions : '',
    wire.tools ? JSON.stringify(wire.tools) : '',
  );
  if (promptTokens <= chat.usage.promptTokens) return chat;
  return priceWorstCase(
    meteredUsage({ promptTokens, completionTokens: chat.usage.completionTokens }),
    routes.map((route) => route.endpoint.pricing),
  );
}
