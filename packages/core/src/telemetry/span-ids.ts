import type { SpanIds } from './encode-otlp-json.js';

/** A source of random bytes: `length` bytes per call. */
export type RandomBytes = (length: number) => Uint8Array;

export const cryptoRandomBytes: RandomBytes = (length) => crypto.getRandomValues(new Uint8Array(length));

/**
 * A generator of fresh ids: a 16-byte trace id and an 8-byte span id as lower-case hex. An id of
 * all zeros is invalid in OpenTelemetry, so that one case has its last bit set.
 */
export function randomSpanIds(random: RandomBytes = cryptoRandomBytes): () => SpanIds {
  return () => ({ traceId: hexId(random(16), 16), spanId: hexId(random(8), 8) });
}

function hexId(bytes: Uint8Array, length: number): string {
  let out = '';
  let allZero = true;
  for (let i = 0; i < length; i++) {
    const byte = bytes[i] ?? 0;
    if (byte !== 0) allZero = false;
    out += byte.toString(16).padStart(2, '0');
  }
  return allZero ? `${out.slice(0, -1)}1` : out;
}
