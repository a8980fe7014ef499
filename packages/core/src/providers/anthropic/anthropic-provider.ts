import type { CatalogueProvider } from '../../catalogue/catalogue.js';
import type { ChatRequest } from '../chat-types.js';
import { guardedBody } from '../guarded-body.js';
import type { HttpClient, HttpResponse } from '../http-client.js';
import type { ProviderAdapter, UpstreamTarget } from '../provider-adapter.js';
import { sseEvents } from '../sse-events.js';
import { UpstreamError } from '../upstream-error.js';
import { readAnthropicHttpError } from './anthropic-http-error.js';
import { anthropicMessageSchema, describeSchemaError } from './anthropic-wire-schemas.js';
import { convertAnthropicStream } from './convert-anthropic-stream.js';
import { convertFromAnthropicResponse } from './convert-from-anthropic-response.js';
import { convertToAnthropicRequest } from './convert-to-anthropic-request.js';

export const ANTHROPIC_VERSION = '2023-06-01';

export interface AnthropicProviderOptions {
  /** Epoch milliseconds; gives `created` and the base of `Retry-After` dates. Defaults to `Date.now`. */
  now?: () => number;
}

/**
 * The Anthropic Messages API adapter: POSTs `${baseUrl}/messages` and translates both ways.
 *
 * Failures: a non-2xx answer → `UpstreamError('http', <Anthropic's message>, status, retryAfterMs)`;
 * the HTTP client throwing → `UpstreamError('network')`, except when `signal` aborted, where the
 * abort error is rethrown as is. A 2xx body that is not a Messages response →
 * `UpstreamError('http', …, 502)`: the provider answered, but not with anything usable (a bad
 * gateway), so the caller treats it like an upstream 5xx. A stream that breaks while being read →
 * `UpstreamError('network')`.
 */
export function createAnthropicProvider(
  http: HttpClient,
  options: AnthropicProviderOptions = {},
): ProviderAdapter {
  const now = options.now ?? Date.now;

  async function send(
    request: ChatRequest,
    target: UpstreamTarget,
    stream: boolean,
    signal: AbortSignal,
    onResponse?: () => void,
  ): Promise<HttpResponse> {
    const body = convertToAnthropicRequest({ ...request, stream }, target);
    let response: HttpResponse;
    try {
      response = await http.request(`${target.provider.baseUrl}/messages`, {
        method: 'POST',
        headers: anthropicHeaders(target.provider),
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new UpstreamError('network', `anthropic: ${describeError(error)}`);
    }
    onResponse?.();
    if (response.status < 200 || response.status > 299) {
      throw await readAnthropicHttpError(response, now(), signal);
    }
    return response;
  }

  return {
    async complete(request, target, { signal, onResponse }) {
      const response = await send(request, target, false, signal, onResponse);
      let text: string;
      try {
        text = await response.text();
      } catch (error) {
        if (signal.aborted) throw error;
        throw new UpstreamError('network', `anthropic: ${describeError(error)}`);
      }
      return convertFromAnthropicResponse(parseMessage(text), now());
    },

    async stream(request, target, { signal, onResponse }) {
      const response = await send(request, target, true, signal, onResponse);
      const body = guardedBody(
        response,
        signal,
        (error) => new UpstreamError('network', `anthropic: the stream broke (${describeError(error)})`),
      );
      return convertAnthropicStream(sseEvents(body), now());
    },
  };
}

/** Headers for one provider: its configured `headers` are added last, so they may override ours. */
export function anthropicHeaders(provider: CatalogueProvider): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': ANTHROPIC_VERSION,
  };
  if (provider.apiKey !== null) headers['x-api-key'] = provider.apiKey;
  for (const [name, value] of Object.entries(provider.headers)) headers[name.toLowerCase()] = value;
  return headers;
}

function parseMessage(text: string) {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UpstreamError('http', 'anthropic: the response body is not JSON', 502);
  }
  const parsed = anthropicMessageSchema.safeParse(json);
  if (!parsed.success) {
    throw new UpstreamError(
      'http',
      `anthropic: malformed response (${describeSchemaError(parsed.error)})`,
      502,
    );
  }
  return parsed.data;
}

function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
