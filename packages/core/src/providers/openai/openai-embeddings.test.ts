import { describe, expect, it } from 'vitest';
import type { EmbeddingsRequest } from '../inference-types.js';
import { fixtureBytes, fixtureJson } from '../wire-fixtures.test-support.js';
import { bytes, call, fakeHttp, target } from './fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai-provider.js';

const embeddingsTarget = { ...target, upstreamModel: 'text-embedding-ada-002' };
const request: EmbeddingsRequest = {
  model: 'openai/ada',
  input: ['The food was delicious and the waiter...'],
  encoding_format: 'base64',
  dimensions: 3,
  user: 'user-7',
  metadata: { team: 'search' },
  models: ['openai/ada', 'other/embedder'],
  provider: { order: ['openai'] },
};

describe('createOpenAIProvider - embeddings', () => {
  it('POSTs to {baseUrl}/embeddings with the upstream model, gateway fields stripped, the rest as sent', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-embeddings-base64.json')] });
    const options = call();
    await createOpenAIProvider(fake.http).embeddings.embed(request, embeddingsTarget, options);
    expect(fake.calls).toHaveLength(1);
    const [sent] = fake.calls;
    expect(sent?.url).toBe('https://api.example.com/v1/embeddings');
    expect(sent?.init.method).toBe('POST');
    expect(sent?.init.signal).toBe(options.signal);
    expect(sent?.init.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'openai-organization': 'org-1',
    });
    expect(JSON.parse(sent?.init.body ?? '')).toEqual({
      model: 'text-embedding-ada-002',
      input: ['The food was delicious and the waiter...'],
      encoding_format: 'base64',
      dimensions: 3,
      user: 'user-7',
    });
  });

  it('returns the float answer as received, with its prompt tokens', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-embeddings.json')] });
    const result = await createOpenAIProvider(fake.http).embeddings.embed(request, embeddingsTarget, call());
    expect(result.response).toEqual(fixtureJson('openai-embeddings.json'));
    expect(result.response.data).toEqual([
      { object: 'embedding', embedding: [0.0023064255, -0.009327292, -0.0028842222], index: 0 },
    ]);
    expect(result.promptTokens).toBe(8);
  });

  it('passes a base64 answer through untouched', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-embeddings-base64.json')] });
    const result = await createOpenAIProvider(fake.http).embeddings.embed(request, embeddingsTarget, call());
    expect(result).toEqual({ response: fixtureJson('openai-embeddings-base64.json'), promptTokens: 8 });
    // The fixture's vector is the float fixture's, as little-endian float32.
    const { embedding } = result.response.data[0] as { embedding: string };
    const vector = Buffer.from(embedding, 'base64');
    expect([0, 4, 8].map((at) => vector.readFloatLE(at))).toEqual([
      expect.closeTo(0.0023064255, 9),
      expect.closeTo(-0.009327292, 9),
      expect.closeTo(-0.0028842222, 9),
    ]);
  });

  it.each([
    ['no usage', {}],
    ['a usage without prompt_tokens', { usage: { total_tokens: 8 } }],
    ['a prompt_tokens that is not a count', { usage: { prompt_tokens: '8' } }],
  ])('%s gives promptTokens null, not a failure', async (_name, extra) => {
    const body = { object: 'list', data: [], model: 'm', ...extra };
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(body))] });
    const result = await createOpenAIProvider(fake.http).embeddings.embed(request, embeddingsTarget, call());
    expect(result).toEqual({ response: body, promptTokens: null });
  });

  it('calls onResponse once the headers arrived', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-embeddings.json')] });
    let responses = 0;
    await createOpenAIProvider(fake.http).embeddings.embed(request, embeddingsTarget, {
      ...call(),
      onResponse: () => responses++,
    });
    expect(responses).toBe(1);
  });
});
