import type { CatalogueProvider } from '../catalogue/catalogue.js';
import type { AnthropicMessage } from './anthropic/anthropic-wire-schemas.js';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, TokenUsage } from './chat-types.js';
import type {
  EmbeddingsRequest,
  EmbeddingsResult,
  ImagesRequest,
  ImagesResult,
  RerankRequest,
  RerankResult,
} from './inference-types.js';

/** Where one attempt goes: a provider, the model name it knows, and the request's output ceiling. */
export interface UpstreamTarget {
  provider: CatalogueProvider;
  upstreamModel: string;
  /**
   * The output ceiling sent upstream when a chat request names none (chat only; 0 otherwise): the
   * model's `max_output_tokens`, lowered to what its `context_length` leaves after the prompt's
   * pre-flight estimate (never below 1). The hold covers it, so no upstream generates past the hold.
   */
  maxOutputTokens: number;
}

export interface CallOptions {
  /** Aborts the upstream call (client gone, deadline passed, attempt timed out). */
  signal: AbortSignal;
  /** Called once the provider's response headers arrived (ends the time-to-first-byte timeout). */
  onResponse?: () => void;
}

export interface CompletionResult {
  /** The OpenAI-shaped body; `model` is still the upstream's name (the caller rewrites it). */
  completion: ChatCompletion;
  usage: TokenUsage | null;
}

/**
 * An open upstream stream: OpenAI-shaped chunks as they arrive. Usage-only chunks are consumed
 * (their counts are in `usage()` once the stream ends) so the gateway can send its own terminal
 * chunk. Iterating throws `UpstreamError` (kind `network`) when the stream breaks.
 */
export interface CompletionStream {
  chunks: AsyncIterable<ChatCompletionChunk>;
  /** Token counts the provider reported, once known; `null` when it never did. */
  usage(): TokenUsage | null;
}

/** Chat completions, as JSON or as a stream. */
export interface ChatCapability {
  complete(request: ChatRequest, target: UpstreamTarget, options: CallOptions): Promise<CompletionResult>;
  /** Resolves once the provider has answered 2xx. */
  stream(request: ChatRequest, target: UpstreamTarget, options: CallOptions): Promise<CompletionStream>;
}

export interface EmbeddingsCapability {
  embed(request: EmbeddingsRequest, target: UpstreamTarget, options: CallOptions): Promise<EmbeddingsResult>;
}

export interface ImagesCapability {
  generate(request: ImagesRequest, target: UpstreamTarget, options: CallOptions): Promise<ImagesResult>;
}

/** One server-sent event of an OpenAI Responses stream, as the upstream sent it. */
export interface ResponsesStreamEvent {
  type: string;
  sequence_number?: number;
  [field: string]: unknown;
}

/** A Responses answer of an upstream that serves `/responses` itself, and its token counts. */
export interface NativeResponse {
  /** The Response object as the upstream sent it. */
  response: Record<string, unknown>;
  usage: TokenUsage | null;
}

/**
 * An open Responses stream: the upstream's events as they arrive, the terminal one
 * (`response.completed` or `response.incomplete`) last. A `response.failed` or `error` event breaks
 * the stream (`UpstreamError` with the upstream's `code`).
 */
export interface ResponsesEventStream {
  chunks: AsyncIterable<ResponsesStreamEvent>;
  /** Token counts of the terminal event's `usage`, once it came; `null` before or without one. */
  usage(): TokenUsage | null;
}

/**
 * The OpenAI Responses API served natively (`{base_url}/responses`, a provider with `responses:
 * true`): the caller's Responses body goes upstream as it is (see `buildResponsesRequest`).
 */
export interface ResponsesCapability {
  create(
    request: Record<string, unknown>,
    target: UpstreamTarget,
    options: CallOptions,
  ): Promise<NativeResponse>;
  /** Resolves once the provider has answered 2xx. */
  stream(
    request: Record<string, unknown>,
    target: UpstreamTarget,
    options: CallOptions,
  ): Promise<ResponsesEventStream>;
}

export interface RerankCapability {
  rerank(request: RerankRequest, target: UpstreamTarget, options: CallOptions): Promise<RerankResult>;
}

/**
 * A Messages API request passed through as the caller wrote it: the body (without the gateway's own
 * fields; `model` is set to the route's upstream model here) and the caller's `anthropic-version` and
 * `anthropic-beta` headers, forwarded verbatim (`null`: not sent).
 */
export interface MessagesPassThrough {
  body: Record<string, unknown>;
  version: string | null;
  beta: string | null;
}

/** A non-streamed answer as Anthropic sent it, its checked shape, and its token counts. */
export interface PassedThroughMessage {
  /** The JSON exactly as parsed: what the caller gets. */
  json: Record<string, unknown>;
  message: AnthropicMessage;
  usage: TokenUsage | null;
}

/** One event of a passed-through stream: its JSON as parsed (`type` and the rest). */
export interface AnthropicEvent {
  type: string;
  [field: string]: unknown;
}

/** An open passed-through stream: its events as they arrive, and the usage they reported so far. */
export interface AnthropicEventStream {
  chunks: AsyncIterable<AnthropicEvent>;
  usage(): TokenUsage | null;
}

/**
 * The Messages API without translation (the Anthropic wire skin's pass-through): the caller's body
 * and answer, unchanged but for `model`, metered from the usage Anthropic reports.
 */
export interface MessagesCapability {
  complete(
    request: MessagesPassThrough,
    target: UpstreamTarget,
    options: CallOptions,
  ): Promise<PassedThroughMessage>;
  /** Resolves once the provider has answered 2xx. */
  stream(
    request: MessagesPassThrough,
    target: UpstreamTarget,
    options: CallOptions,
  ): Promise<AnthropicEventStream>;
  /** `POST /messages/count_tokens`: the prompt's input tokens as Anthropic counts them. */
  countTokens(request: MessagesPassThrough, target: UpstreamTarget, options: CallOptions): Promise<number>;
}

/** What a provider can be asked to do; a wire format offers the capabilities it serves. */
export type Capability = 'chat' | 'embeddings' | 'images' | 'rerank';

/**
 * One upstream wire format: one member per capability it serves (the AI SDK's provider shape).
 * Every method throws `UpstreamError` when the attempt fails before an answer is in hand (non-2xx
 * status, network failure, a 2xx body that cannot be read); an abort through `options.signal` is
 * rethrown as it is.
 */
export interface ProviderAdapter {
  readonly chat?: ChatCapability;
  readonly embeddings?: EmbeddingsCapability;
  readonly images?: ImagesCapability;
  readonly rerank?: RerankCapability;
  /**
   * The Anthropic Messages API passed through (format `anthropic`), which the Messages skin uses
   * instead of `chat` on a route that has it. Not a routing capability: a Messages request is routed
   * as chat.
   */
  readonly messages?: MessagesCapability;
  /** The Responses API served natively (`openai` format; used for providers with `responses: true`). */
  readonly responses?: ResponsesCapability;
}

/** Request fields the gateway owns; they never go upstream. */
export const GATEWAY_FIELDS = [
  'models',
  'provider',
  'transforms',
  'route',
  'metadata',
  'plugins',
  'preset',
  'cache',
] as const;
