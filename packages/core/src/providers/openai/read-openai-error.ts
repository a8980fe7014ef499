import { bareErrorMessageSchema, openAIErrorEnvelopeSchema } from './openai-wire-schemas.js';

/** Longest provider message passed on; an error body is not a place for megabytes of text. */
const MAX_MESSAGE_CHARS = 1000;

/**
 * The provider's own message from an error body (`{error:{message}}`, `{error:"…"}`, or a bare
 * `{message}`), or `null` when the text is not such JSON. Anything else in the body (an HTML page
 * from a proxy, a stack trace) is never passed on.
 */
export function readOpenAIErrorMessage(text: string): string | null {
  const json = parseJsonOrUndefined(text);
  return json === undefined ? null : errorMessageOf(json);
}

/** The message of an already-parsed error payload, or `null` when it is not one. */
export function errorMessageOf(json: unknown): string | null {
  const envelope = openAIErrorEnvelopeSchema.safeParse(json);
  let message: string | null | undefined;
  if (envelope.success) {
    const { error } = envelope.data;
    message = typeof error === 'string' ? error : error.message;
  } else {
    const bare = bareErrorMessageSchema.safeParse(json);
    message = bare.success ? bare.data.message : null;
  }
  if (!message) return null;
  return message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS)}…` : message;
}

/** `JSON.parse`, with `undefined` for text that is not JSON. */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
