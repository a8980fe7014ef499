import { createOpenAIProvider } from '../openai/openai-provider.js';
import type { ProviderAdapter } from '../provider-adapter.js';
import { createDemoHttpClient } from './demo-http-client.js';

interface DemoProviderOptions {
  /** The clock of the replies' `created` field; defaults to `Date.now`. */
  now?: () => number;
}

/**
 * The adapter of the built-in `demo` format (config `{"format": "demo"}`): the OpenAI adapter's
 * chat, embeddings, images and rerank over an in-process upstream. Everything but the HTTP call is
 * the real path — the request the OpenAI adapter builds, its response and stream parsing, and then
 * the gateway's pre-flight, routing, pricing, settle, ledger entry and request record — so a demo
 * model is metered exactly like a real one, offline and with no key.
 */
export function createDemoProvider(
  options: DemoProviderOptions = {},
): Required<Pick<ProviderAdapter, 'chat' | 'embeddings' | 'images' | 'rerank'>> {
  const now = options.now ?? Date.now;
  // Not the Responses API natively: a demo route is always translated through chat.
  const { chat, embeddings, images, rerank } = createOpenAIProvider(createDemoHttpClient(now), { now });
  return { chat, embeddings, images, rerank };
}
