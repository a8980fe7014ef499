import type { CatalogueProvider } from '../../catalogue/catalogue.js';
import type { ChatCompletion, ChatRequest, TokenUsage } from '../chat-types.js';
import { guardedBody } from '../guarded-body.js';
import type { HttpClient, HttpResponse } from '../http-client.js';
import type { CallOptions, CompletionStream, ProviderAdapter, UpstreamTarget } from '../provider-adapter.js';
import { sseEvents } from '../sse-events.js';
import { UpstreamError } from '../upstream-error.js';
import { buildOpenAIRequest } from './build-openai-request.js';
import { convertOpenAIStream } from './convert-openai-stream.js';
import { convertOpenAIUsage } from './convert-openai-usage.js';
import { httpFailure, networkFailure } from './openai-upstream-failures.js';
import { openAICompletionSchema } from './openai-wire-schemas.js';
import { parseJsonOrUndefined } from './read-openai-error.js';

export interface OpenAIProviderOptions {
  /** The clock `Retry-After` dates are measured against; defaults to `Date.now`. */
  now?: () => number;
}

/**
 * The adapter for every upstream that speaks OpenAI chat completions (OpenAI, DeepSeek, Groq, local
 * servers…): `POST {baseUrl}/chat/completions` with the caller's request passed through. Failures
 * before the body are `UpstreamError`s; an abort through `options.signal` is rethrown as it is.
 */
export function createOpenAIProvider(http: HttpClient, options: OpenAIProviderOptions = {}): ProviderAdapter {
  const now = options.now ?? Date.now;

  async function send(
    request: ChatRequest,
    target: UpstreamTarget,
    call: CallOptions,
    stream: boolean,
  ): Promise<HttpResponse> {
    const { provider } = target;
    let response: HttpResponse;
    try {
      response = await http.request(`${provider.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: requestHeaders(provider),
        body: JSON.stringify(buildOpenAIRequest(request, target, { stream })),
        signal: call.signal,
      });
    } catch (error) {
      throw networkFailure(error, call.signal, `could not reach provider ${provider.id}`);
    }
    call.onResponse?.();
    if (response.status >= 200 && response.status < 300) return response;
    throw await httpFailure(response, now());
  }

  return {
    async complete(request, target, call) {
      const response = await send(request, target, call, false);
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        throw networkFailure(error, call.signal, 'the response body broke off');
      }
      const json = parseJsonOrUndefined(text);
      const parsed = openAICompletionSchema.safeParse(json);
      // A 2xx we cannot read failed this attempt as surely as a dropped connection.
      if (!parsed.success) throw new UpstreamError('network', 'upstream sent an unreadable completion');
      return { completion: json as ChatCompletion, usage: convertOpenAIUsage(parsed.data.usage) };
    },

    async stream(request, target, call): Promise<CompletionStream> {
      const response = await send(request, target, call, true);
      let usage: TokenUsage | null = null;
      const body = guardedBody(response, call.signal, (error) =>
        networkFailure(error, call.signal, 'the upstream stream broke off'),
      );
      const chunks = convertOpenAIStream(sseEvents(body), (reported) => {
        usage = reported;
      });
      return { chunks, usage: () => usage };
    },
  };
}

/** Provider headers win over ours; names are lower-cased so an `Authorization` replaces ours, not joins it. */
function requestHeaders(provider: CatalogueProvider): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (provider.apiKey !== null) headers.authorization = `Bearer ${provider.apiKey}`;
  for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
  return headers;
}
