import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../../metering/estimate-worst-case.js';
import { UpstreamError } from '../upstream-error.js';
import { DEMO_EMBEDDING_DIMENSIONS, demoVector } from './demo-embeddings.js';
import { createDemoProvider } from './demo-provider.js';
import { demoCall, demoTarget } from './demo-target.test-support.js';

const demo = createDemoProvider();
const target = demoTarget('embedding-small');
const embed = (body: Record<string, unknown>) =>
  demo.embeddings.embed(
    { model: 'demo/embedding-small', input: 'hello', ...body } as never,
    target,
    demoCall(),
  );

type Item = { object: string; index: number; embedding: number[] | string };
const vectors = (data: unknown[]) => (data as Item[]).map((item) => item.embedding as number[]);
const cosine = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe('demo embeddings (through the OpenAI adapter, in-process)', () => {
  it('one unit-length vector of 256 floats per input, in order, deterministic; usage as the pre-flight counts', async () => {
    const input = ['The quick brown fox', 'Tollgate meters every call.'];
    const { response, promptTokens } = await embed({ input });
    expect(response).toMatchObject({ object: 'list', model: 'embedding-small' });
    expect((response.data as Item[]).map((item) => [item.object, item.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
    ]);
    const [a, b] = vectors(response.data);
    expect(a).toHaveLength(DEMO_EMBEDDING_DIMENSIONS);
    for (const vector of [a!, b!]) expect(Math.hypot(...vector)).toBeCloseTo(1, 6);
    expect(a).not.toEqual(b);
    expect(vectors((await embed({ input })).response.data)).toEqual([a, b]);
    expect(promptTokens).toBe(estimateTokens(...input));
    expect(response.usage).toEqual({ prompt_tokens: promptTokens, total_tokens: promptTokens });
  });

  it('texts that share words are closer than texts that share none', () => {
    const cat = demoVector('the cat sat on the mat', 64);
    const cats = demoVector('a cat on a mat', 64);
    const rates = demoVector('interest rates rose sharply', 64);
    expect(cosine(cat, cats)).toBeGreaterThan(cosine(cat, rates));
    expect(cosine(cat, demoVector('The CAT sat on the mat!', 64))).toBeCloseTo(1, 6);
  });

  it('honours dimensions', async () => {
    const { response } = await embed({ input: ['alpha', 'beta'], dimensions: 8 });
    expect(vectors(response.data).map((v) => v.length)).toEqual([8, 8]);
  });

  it('encoding_format base64: little-endian float32 bytes of the very floats the float format gives', async () => {
    const floats = vectors((await embed({ input: 'hello world', dimensions: 16 })).response.data)[0]!;
    const { response } = await embed({ input: 'hello world', dimensions: 16, encoding_format: 'base64' });
    const encoded = (response.data[0] as Item).embedding as string;
    const bytes = Buffer.from(encoded, 'base64');
    expect(bytes).toHaveLength(16 * 4);
    expect(Array.from({ length: 16 }, (_, i) => bytes.readFloatLE(i * 4))).toEqual(floats);
  });

  it('token-id inputs: one vector per array, a token each in the usage', async () => {
    const { response, promptTokens } = await embed({ input: [[1, 2, 3], [4]] });
    expect(vectors(response.data)).toHaveLength(2);
    expect(promptTokens).toBe(4);
    const single = await embed({ input: [1, 2, 3] });
    expect(vectors(single.response.data)).toEqual([vectors(response.data)[0]]);
  });

  it('a text with no word still gets a unit vector', () => {
    expect(Math.hypot(...demoVector('?!', 32))).toBeCloseTo(1, 6);
  });

  it('refuses more than 3,072 dimensions with a 400, as an upstream would', async () => {
    const error = await embed({ dimensions: 3073 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ kind: 'http', status: 400 });
  });
});
