import { describe, expect, it } from 'vitest';
import type { ImagesRequest } from '../inference-types.js';
import { fixtureBytes, fixtureJson } from '../wire-fixtures.test-support.js';
import { call, fakeHttp, target } from './fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai-provider.js';

const imagesTarget = { ...target, upstreamModel: 'gpt-image-1' };
const request: ImagesRequest = {
  model: 'openai/gpt-image',
  prompt: 'A cute baby sea otter',
  n: 1,
  size: '1024x1024',
  response_format: 'b64_json',
  background: 'transparent',
  transforms: ['middle-out'],
  route: 'fallback',
};

describe('createOpenAIProvider - images', () => {
  it('POSTs to {baseUrl}/images/generations with the upstream model, gateway fields stripped', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-images-b64.json')] });
    const options = call();
    await createOpenAIProvider(fake.http).images.generate(request, imagesTarget, options);
    const [sent] = fake.calls;
    expect(sent?.url).toBe('https://api.example.com/v1/images/generations');
    expect(sent?.init.signal).toBe(options.signal);
    expect(sent?.init.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'openai-organization': 'org-1',
    });
    expect(JSON.parse(sent?.init.body ?? '')).toEqual({
      model: 'gpt-image-1',
      prompt: 'A cute baby sea otter',
      n: 1,
      size: '1024x1024',
      response_format: 'b64_json',
      background: 'transparent',
    });
  });

  it('returns a b64_json answer as received, its token usage included', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-images-b64.json')] });
    const { response } = await createOpenAIProvider(fake.http).images.generate(request, imagesTarget, call());
    expect(response).toEqual(fixtureJson('openai-images-b64.json'));
    expect(response.data).toHaveLength(1);
    expect(response.usage).toMatchObject({ input_tokens_details: { text_tokens: 10, image_tokens: 40 } });
  });

  it('returns a url answer as received: one item per image', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('openai-images-url.json')] });
    const { response } = await createOpenAIProvider(fake.http).images.generate(
      { ...request, n: 2, response_format: 'url' },
      imagesTarget,
      call(),
    );
    expect(response).toEqual({ created: 1589478378, data: [{ url: 'https://...' }, { url: 'https://...' }] });
  });
});
