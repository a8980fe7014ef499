import { readFileSync } from 'node:fs';

/*
 * Test support for both adapters: the recorded upstream replies in the repository's
 * `test/fixtures/wire` (see its README), read as recorded, and the tools to feed a
 * body back in arbitrary pieces. How a `.chunks.txt` file becomes a body is format-specific: see
 * `openAIWireBody` and `anthropicWireBody` beside each adapter.
 */

const FIXTURES = new URL('../../../../test/fixtures/wire/', import.meta.url);

/** A fixture file's bytes, exactly as recorded. */
export function fixtureBytes(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, FIXTURES)));
}

/** A fixture file's text, exactly as recorded. */
export function readWireFixture(name: string): string {
  return readFileSync(new URL(name, FIXTURES), 'utf8');
}

/** A fixture file parsed as JSON. */
export function fixtureJson(name: string): unknown {
  return JSON.parse(readWireFixture(name));
}

/** A seeded PRNG (mulberry32) in [0, 1), so a failing split can be reproduced. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The bytes cut at the given offsets (ascending), which may fall inside a UTF-8 character. */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let start = 0;
  for (const cut of cuts) {
    pieces.push(bytes.subarray(start, cut));
    start = cut;
  }
  pieces.push(bytes.subarray(start));
  return pieces;
}

/** The bytes cut into pieces of random length between 1 and `maxPiece`. */
export function randomSplit(bytes: Uint8Array, random: () => number, maxPiece = 64): Uint8Array[] {
  const cuts: number[] = [];
  for (
    let at = 1 + Math.floor(random() * maxPiece);
    at < bytes.length;
    at += 1 + Math.floor(random() * maxPiece)
  ) {
    cuts.push(at);
  }
  return splitAt(bytes, cuts);
}

/** The pieces as a byte stream, each one a separate read, as from a socket. */
export async function* byteStream(pieces: readonly Uint8Array[]): AsyncIterable<Uint8Array> {
  for (const piece of pieces) yield piece;
}

/** Every item of an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
