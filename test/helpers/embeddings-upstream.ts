import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from './loopback-server.js';

/** One request the upstream received. */
export interface UpstreamRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary request shapes.
  body: any;
}

/** Dimensions of a vector when the request does not ask for `dimensions`. */
export const DEFAULT_DIMENSIONS = 8;

/** The fixed `created` of every image answer (seconds since the epoch). */
export const IMAGES_CREATED = 1_735_689_600;

/**
 * The vector the upstream returns for one input: deterministic (FNV-1a of the input seeds a small
 * LCG), values in [-1, 1) rounded to float32 — what OpenAI's vectors are — so the float and the
 * base64 encodings carry exactly the same numbers.
 */
export function embeddingFor(input: string | number[], dimensions = DEFAULT_DIMENSIONS): number[] {
  const text = typeof input === 'string' ? input : JSON.stringify(input);
  let state = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    state ^= text.charCodeAt(i);
    state = Math.imul(state, 0x01000193) >>> 0;
  }
  const vector: number[] = [];
  for (let i = 0; i < dimensions; i++) {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    vector.push(Math.fround(state / 2 ** 31 - 1));
  }
  return vector;
}

/** OpenAI's `encoding_format: "base64"`: the vector as little-endian float32 bytes, base64-encoded. */
export function float32Base64(vector: number[]): string {
  const bytes = new DataView(new ArrayBuffer(vector.length * 4));
  for (const [i, value] of vector.entries()) bytes.setFloat32(i * 4, value, true);
  return Buffer.from(bytes.buffer).toString('base64');
}

/** Tokens the upstream reports for one input: ⌈characters / 4⌉ (at least 1) of a text, the length of a token array. */
export function tokensOf(input: string | number[]): number {
  return typeof input === 'string' ? Math.max(1, Math.ceil(input.length / 4)) : input.length;
}

/** The inputs of an embeddings request, one per vector (a string, or one token array). */
function inputsOf(input: unknown): (string | number[])[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) throw new Error('input must be a string or an array');
  if (input.length > 0 && input.every((item) => typeof item === 'number')) return [input as number[]];
  return input as (string | number[])[];
}

/** The bytes of the `i`-th image of a `b64_json` answer (not a real PNG: the tests only compare them). */
export function imageBytes(prompt: string, i: number): Buffer {
  return Buffer.from(`\x89PNG image ${i} of ${prompt}`);
}

/** The URL of the `i`-th image of a `url` answer. */
export function imageUrl(i: number): string {
  return `https://images.upstream.test/generated/img-${i}.png`;
}

/**
 * A loopback upstream that speaks OpenAI's embeddings and image-generation wire format, computing
 * each answer from the request (unlike `MockUpstream`, which replays scripted bodies):
 * - `POST …/embeddings` → `{object: "list", data: [{object: "embedding", index, embedding}], model,
 *   usage: {prompt_tokens, total_tokens}}`, each vector float32 numbers or, for
 *   `encoding_format: "base64"`, the base64 of its little-endian float32 bytes (as OpenAI does);
 * - `POST …/images/generations` → `{created, data: [{url, revised_prompt}] | [{b64_json, revised_prompt}]}`
 *   with `n` (default 1) images.
 * Anything else answers OpenAI's 404 error. Every request is recorded.
 */
export class OpenAIEmbeddingsUpstream {
  readonly received: UpstreamRequest[] = [];
  private readonly loopback = new LoopbackServer();
  url = '';

  async start(): Promise<this> {
    this.url = await this.loopback.listen((req, res) => void this.handle(req, res));
    return this;
  }

  async stop(): Promise<void> {
    await this.loopback.close();
  }

  reset(): void {
    this.received.length = 0;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const path = req.url ?? '/';
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw);
    } catch {}
    this.received.push({ method: req.method ?? 'GET', path, headers: req.headers, body });
    const send = (status: number, answer: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    };
    try {
      if (req.method === 'POST' && path.endsWith('/embeddings')) send(200, this.embeddings(body));
      else if (req.method === 'POST' && path.endsWith('/images/generations')) send(200, this.images(body));
      else
        send(404, {
          error: {
            message: `Unknown request URL: ${req.method} ${path}.`,
            type: 'invalid_request_error',
            code: null,
          },
        });
    } catch (error) {
      send(400, {
        error: { message: (error as Error).message, type: 'invalid_request_error', param: null, code: null },
      });
    }
  }

  private embeddings(body: Record<string, unknown>) {
    const inputs = inputsOf(body.input);
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : DEFAULT_DIMENSIONS;
    const base64 = body.encoding_format === 'base64';
    const tokens = inputs.reduce((sum, input) => sum + tokensOf(input), 0);
    return {
      object: 'list',
      data: inputs.map((input, index) => {
        const vector = embeddingFor(input, dimensions);
        return { object: 'embedding', index, embedding: base64 ? float32Base64(vector) : vector };
      }),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
  }

  private images(body: Record<string, unknown>) {
    const prompt = String(body.prompt);
    const n = typeof body.n === 'number' ? body.n : 1;
    const b64 = body.response_format === 'b64_json';
    return {
      created: IMAGES_CREATED,
      data: Array.from({ length: n }, (_, i) =>
        b64
          ? { b64_json: imageBytes(prompt, i).toString('base64'), revised_prompt: prompt }
          : { url: imageUrl(i), revised_prompt: prompt },
      ),
    };
  }
}
