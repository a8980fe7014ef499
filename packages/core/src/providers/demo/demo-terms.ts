/*
 * What the demo's embeddings, rerank and images derive from a text: its words and a stable hash.
 * Nothing random, nothing that depends on the process, so a demo answer is the same everywhere.
 */

const encoder = new TextEncoder();

/** The text's words (letters and digits), lower-cased, in order, repeats kept. */
export function demoTerms(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/**
 * The 32-bit FNV-1a hash of the text's UTF-8 bytes, as an unsigned integer: a stable, well-spread
 * hash that needs no async digest (the Web's `crypto.subtle` has only async ones).
 */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
