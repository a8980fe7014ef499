import { base64 } from '../../base64url.js';
import { estimateTokens } from '../../metering/estimate-worst-case.js';
import { type DemoJsonAnswer, invalidRequest } from './demo-json-answer.js';
import { demoTerms, fnv1a } from './demo-terms.js';

/*
 * The offline demo's embeddings: a vector per input from feature hashing — each word (or token id)
 * adds ±1 at a position picked by its hash, then the vector is scaled to length 1. Deterministic and
 * offline, yet texts that share words point the same way, so a cosine search over demo vectors
 * behaves like a (very plain) real one.
 */

/** Dimensions of a demo vector when the request names none. */
export const DEMO_EMBEDDING_DIMENSIONS = 256;
/** The most dimensions the demo gives: text-embedding-3-large's 3,072. */
const DEMO_MAX_EMBEDDING_DIMENSIONS = 3072;

/**
 * `POST /embeddings` of the demo upstream: OpenAI's list, one vector per input in order, as floats
 * or, with `encoding_format: "base64"`, as little-endian float32 bytes in base64 (what the openai SDK
 * asks for and decodes). Floats are rounded to float32, so both encodings carry the same numbers.
 * `dimensions` sets the length (default 256, at most 3,072). Usage counts tokens as the gateway's
 * pre-flight does (about 4 characters a token; token ids one each), so it never exceeds the hold.
 */
export function demoEmbeddings(body: Record<string, unknown>): DemoJsonAnswer {
  const inputs = embeddingInputs(body.input);
  if (inputs === null)
    return invalidRequest('input must be a string, strings, token ids or arrays of token ids');
  const dimensions = body.dimensions ?? DEMO_EMBEDDING_DIMENSIONS;
  if (!Number.isInteger(dimensions) || (dimensions as number) < 1) {
    return invalidRequest('dimensions must be a positive integer');
  }
  if ((dimensions as number) > DEMO_MAX_EMBEDDING_DIMENSIONS) {
    return invalidRequest(
      `the demo embedding model gives at most ${DEMO_MAX_EMBEDDING_DIMENSIONS} dimensions`,
    );
  }
  const base64 = body.encoding_format === 'base64';
  const data = inputs.map((input, index) => {
    const vector = demoVector(input, dimensions as number);
    return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
  });
  const texts = inputs.filter((input): input is string => typeof input === 'string');
  const ids = inputs.reduce((sum, input) => sum + (typeof input === 'string' ? 0 : input.length), 0);
  const tokens = estimateTokens(...texts) + ids;
  return {
    status: 200,
    body: {
      object: 'list',
      data,
      model: String(body.model ?? 'demo'),
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    },
  };
}

/**
 * The vector of one input, of length 1 (to float32 precision): its words (or token ids) hashed
 * into `dimensions` positions with a sign each. A text with no word at all hashes as one feature.
 */
export function demoVector(input: string | number[], dimensions: number): number[] {
  const features = typeof input === 'string' ? demoTerms(input) : input.map((id) => `#${id}`);
  if (features.length === 0) features.push(String(input));
  const vector = new Array<number>(dimensions).fill(0);
  for (const feature of features) {
    const hash = fnv1a(feature);
    vector[hash % dimensions]! += Math.floor(hash / dimensions) % 2 === 0 ? 1 : -1;
  }
  const norm = Math.hypot(...vector);
  // Features that cancel out would leave a zero vector, which has no direction: fall back to one axis.
  if (norm === 0) vector[fnv1a(String(input)) % dimensions] = 1;
  return vector.map((value) => Math.fround(norm === 0 ? value : value / norm));
}

/** Each input of the request, or `null` when `input` has none of OpenAI's four shapes. */
function embeddingInputs(input: unknown): (string | number[])[] | null {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return null;
  if (input.every((item) => typeof item === 'number')) return [input as number[]];
  if (input.every((item) => typeof item === 'string')) return input as string[];
  if (input.every((item) => Array.isArray(item) && item.every((id) => typeof id === 'number'))) {
    return input as number[][];
  }
  return null;
}

/** The vector as little-endian float32 bytes in base64, OpenAI's `encoding_format: "base64"`. */
function float32Base64(vector: number[]): string {
  const view = new DataView(new ArrayBuffer(vector.length * 4));
  for (const [i, value] of vector.entries()) view.setFloat32(i * 4, value, true);
  return base64(new Uint8Array(view.buffer));
}
