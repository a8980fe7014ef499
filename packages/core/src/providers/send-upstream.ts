import type { CatalogueProvider } from '../catalogue/catalogue.js';
import type { HttpClient, HttpResponse } from './http-client.js';
import type { CallOptions } from './provider-adapter.js';
import { networkFailure, parseRetryAfter, UpstreamError } from './upstream-error.js';

/**
 * How one wire format words its failures: where the provider's own message sits in an error body,
 * and what to say when there is none. The shared send and read do the rest the same way for every
 * format.
 */
export interface UpstreamDialect {
  /** The provider's own message in a non-2xx body, or `null` when the body holds none. */
  errorMessage(body: string): string | null;
  /** The message of a non-2xx answer whose body has no message of its own. */
  statusMessage(status: number): string;
  /** The message of a call that failed before any answer; `error` is what the HTTP client threw. */
  unreachableMessage(provider: CatalogueProvider, error: unknown): string;
  /** The message of a 2xx answer whose body broke off while being read. */
  brokenBodyMessage(provider: CatalogueProvider, error: unknown): string;
}

/** What every call of one adapter shares: the HTTP client, the format's wording, the clock. */
export interface UpstreamChannel {
  http: HttpClient;
  dialect: UpstreamDialect;
  /** Epoch milliseconds; `Retry-After` dates are measured against it. */
  now: () => number;
}

/** One JSON POST to a provider. */
export interface UpstreamPost {
  /** The provider called; failure messages name it. */
  provider: CatalogueProvider;
  url: string;
  headers: Record<string, string>;
  /** Sent as JSON. */
  body: unknown;
}

/**
 * POSTs `post.body` as JSON and resolves with a 2xx response, its body still unread. Calls
 * `call.onResponse` once the headers arrived. Failures: the HTTP client throwing →
 * `UpstreamError('network')` (the abort itself when `call.signal` aborted); a non-2xx answer →
 * `UpstreamError('http', <the provider's message>, status, retryAfterMs)`, its body read to the end
 * (which also hands the connection back).
 */
export async function sendUpstream(
  channel: UpstreamChannel,
  post: UpstreamPost,
  call: CallOptions,
): Promise<HttpResponse> {
  let response: HttpResponse;
  try {
    response = await channel.http.request(post.url, {
      method: 'POST',
      headers: post.headers,
      body: JSON.stringify(post.body),
      signal: call.signal,
    });
  } catch (error) {
    throw networkFailure(error, call.signal, channel.dialect.unreachableMessage(post.provider, error));
  }
  call.onResponse?.();
  if (response.status >= 200 && response.status < 300) return response;
  throw await httpFailure(channel, response, call.signal);
}

/** A non-2xx answer as an `UpstreamError`; a body that cannot be read counts as empty, unless aborted. */
async function httpFailure(
  channel: UpstreamChannel,
  response: HttpResponse,
  signal: AbortSignal,
): Promise<UpstreamError> {
  let text = '';
  try {
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw error;
  }
  const { dialect } = channel;
  return new UpstreamError(
    'http',
    dialect.errorMessage(text) ?? dialect.statusMessage(response.status),
    response.status,
    parseRetryAfter(response.header('retry-after'), channel.now()),
  );
}
