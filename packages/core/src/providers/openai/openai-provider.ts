import type { HttpClient } from '../http-client.js';
import type { ProviderAdapter } from '../provider-adapter.js';
import { openAIChat } from './openai-chat.js';
import { openAIDialect } from './openai-dialect.js';
import { openAIEmbeddings } from './openai-embeddings.js';
import { openAIImages } from './openai-images.js';
import { openAIRerank } from './openai-rerank.js';
import { openAIResponses } from './openai-responses.js';

interface OpenAIProviderOptions {
  /** The clock `Retry-After` dates are measured against; defaults to `Date.now`. */
  now?: () => number;
}

/**
 * The adapter for every upstream that speaks the OpenAI API (OpenAI, DeepSeek, Groq, vLLM, local
 * servers…): chat completions, embeddings, image generation, rerank in the Jina/vLLM shape, and
 * the Responses API for providers that serve it (`responses: true`).
 * Whether a given server serves a capability is the catalogue's business; one that does not
 * answers 404, which comes back as `UpstreamError('http')`. Failures follow `sendUpstream` and
 * `readUpstreamJson`; an abort through `options.signal` is rethrown as it is.
 */
export function createOpenAIProvider(
  http: HttpClient,
  options: OpenAIProviderOptions = {},
): Required<Omit<ProviderAdapter, 'webSearch' | 'messages'>> {
  const channel = { http, dialect: openAIDialect, now: options.now ?? Date.now };
  return {
    chat: openAIChat(channel),
    embeddings: openAIEmbeddings(channel),
    images: openAIImages(channel),
    rerank: openAIRerank(channel),
    responses: openAIResponses(channel),
  };
}
