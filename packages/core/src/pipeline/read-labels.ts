import { GatewayError } from '../errors/gateway-error.js';
import { hasNul, NUL_MESSAGE } from '../http/stored-text.js';

const MAX_KEYS = 16;
/** The longest metadata key (label name). */
const MAX_KEY_LENGTH = 64;
/** The longest metadata value. */
export const MAX_VALUE_LENGTH = 256;
const KEY_PATTERN = /^[A-Za-z0-9._:-]+$/;

/** Whether `key` may name a metadata label: 1–64 characters of `A-Z a-z 0-9 . _ : -`. */
export function isMetadataKey(key: string): boolean {
  return key.length >= 1 && key.length <= MAX_KEY_LENGTH && KEY_PATTERN.test(key);
}

/**
 * The spec's metadata rules: at most 16 keys of 1–64 characters from `A-Z a-z 0-9 . _ : -`,
 * values at most 256 characters, numbers and booleans coerced to strings, objects, arrays and null
 * refused. A limit exceeded is an error, never a truncation. `HTTP-Referer` and `X-Title` become
 * `referer` and `title` unless the body has them; they do not count towards the 16 keys.
 */
export function readLabels(
  body: unknown,
  headers: { referer: string | null; title: string | null },
): Record<string, string> {
  // No prototype: a label may be called `__proto__` (the spec's key characters allow it).
  const labels: Record<string, string> = Object.create(null);
  if (body !== undefined) {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      throw invalid('metadata must be an object of string labels.');
    }
    const entries = Object.entries(body);
    if (entries.length > MAX_KEYS)
      throw invalid(`metadata has ${entries.length} keys; at most ${MAX_KEYS} are allowed.`);
    for (const [key, value] of entries) {
      if (key.length === 0 || key.length > MAX_KEY_LENGTH) {
        throw invalid(
          `metadata key "${key.slice(0, MAX_KEY_LENGTH)}…" must be 1 to ${MAX_KEY_LENGTH} characters.`,
        );
      }
      if (!KEY_PATTERN.test(key)) throw invalid(`metadata key "${key}" may only use A-Z a-z 0-9 . _ : -`);
      labels[key] = labelValue(key, value);
    }
  }
  if (headers.referer !== null && !Object.hasOwn(labels, 'referer'))
    labels.referer = headerValue('HTTP-Referer', headers.referer);
  if (headers.title !== null && !Object.hasOwn(labels, 'title'))
    labels.title = headerValue('X-Title', headers.title);
  return labels;
}

function labelValue(key: string, value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean') text = String(value);
  else
    throw invalid(
      `metadata.${key} must be a string, number or boolean (objects, arrays and null are refused).`,
    );
  if (text.length > MAX_VALUE_LENGTH) {
    throw invalid(`metadata.${key} is ${text.length} characters; at most ${MAX_VALUE_LENGTH} are allowed.`);
  }
  if (hasNul(text)) throw invalid(`metadata.${key} ${NUL_MESSAGE}.`);
  return text;
}

function headerValue(name: string, value: string): string {
  if (value.length > MAX_VALUE_LENGTH) {
    throw invalid(
      `The ${name} header is ${value.length} characters; at most ${MAX_VALUE_LENGTH} are allowed.`,
    );
  }
  return value;
}

function invalid(message: string): GatewayError {
  return new GatewayError('invalid_request', message);
}
