import type { UpstreamDialect } from '../send-upstream.js';
import { anthropicErrorSchema } from './anthropic-wire-schemas.js';

/**
 * How the Anthropic adapter words failures. The provider's message comes from the error envelope
 * `{type:'error', error:{type, message}}`; a body that is not one (a proxy's HTML page, an empty
 * body) gives a generic message and is never echoed.
 */
export const anthropicDialect: UpstreamDialect = {
  errorMessage: readAnthropicErrorMessage,
  statusMessage: (status) => `anthropic answered HTTP ${status}`,
  unreachableMessage: (_provider, error) => `anthropic: ${describeError(error)}`,
  brokenBodyMessage: (_provider, error) => `anthropic: ${describeError(error)}`,
};

/** Anthropic's own message in an error body, or `null` when the body is not its error envelope. */
function readAnthropicErrorMessage(text: string): string | null {
  try {
    const parsed = anthropicErrorSchema.safeParse(JSON.parse(text));
    if (parsed.success && parsed.data.error.message !== '') return parsed.data.error.message;
  } catch {
    // not JSON: no message
  }
  return null;
}

/** An error for a log line, with the reason `fetch` keeps in `cause`. */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}
