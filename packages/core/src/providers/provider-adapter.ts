import type { CatalogueProvider } from '../catalogue/catalogue.js';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, TokenUsage } from './chat-types.js';

/** Where one attempt goes: a provider, the model name it knows, and the model's output ceiling. */
export interface UpstreamTarget {
  provider: CatalogueProvider;
  upstreamModel: string;
  /** Sent as `max_tokens` to providers that require one when the request has none. */
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

/**
 * One upstream wire format. Both methods throw `UpstreamError` when the attempt fails before a
 * response body starts (non-2xx status, network failure); `stream` resolves once the provider has
 * answered 2xx.
 */
export interface ProviderAdapter {
  complete(request: ChatRequest, target: UpstreamTarget, options: CallOptions): Promise<CompletionResult>;
  stream(request: ChatRequest, target: UpstreamTarget, options: CallOptions): Promise<CompletionStream>;
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
] as const;
