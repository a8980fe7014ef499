import type { UpstreamDialect } from '../send-upstream.js';
import { readOpenAIErrorMessage } from './read-openai-error.js';

/**
 * How OpenAI-style upstreams word failures: the message of `{error:{message}}`, `{error:"…"}` or a
 * bare `{message}` (which also covers Cohere's `{message}` and `{id, message}` error bodies), else
 * a short text naming the status. Network messages name the configured provider.
 */
export const openAIDialect: UpstreamDialect = {
  errorMessage: readOpenAIErrorMessage,
  statusMessage: (status) => `upstream answered HTTP ${status}`,
  unreachableMessage: (provider, error) => `could not reach provider ${provider.id}: ${describeError(error)}`,
  brokenBodyMessage: (_provider, error) => `the response body broke off: ${describeError(error)}`,
};

/** An error for a log line; `fetch` says only "fetch failed", so the reason in `cause` is added. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : null;
  return cause ? `${error.message} (${cause})` : error.message;
}
