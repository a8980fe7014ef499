import { describe, expect, it } from 'vitest';
import type { RerankRequest } from '../inference-types.js';
import { bytes, call, fakeHttp, rejection } from '../openai/fake-http-client.test-support.js';
import type { UpstreamTarget } from '../provider-adapter.js';
import { UpstreamError } from '../upstream-error.js';
import { fixtureBytes } from '../wire-fixtures.test-support.js';
import { createCohereProvider } from './cohere-provider.js';

const target: UpstreamTarget = {
  provider: {
    id: 'cohere',
    format: 'cohere',
    baseUrl: 'https://api.cohere.com/v2',
    apiKey: 'co-test',
    headers: { 'X-Client-Name': 'tollgate' },
    timeoutMs: null,
    streamIdleTimeoutMs: 60_000,
  },
  upstreamModel: 'rerank-v3.5',
  maxOutputTokens: 0,
};
const documents = ['Carson City', 'Saipan', 'Capitalization', 'Washington, D.C.', 'Capital punishment'];
const request: RerankRequest = {
  model: 'cohere/rerank',
  query: 'What is the capital of the United States?',
  documents: documents.map((text, i) => (i % 2 === 0 ? text : { text })),
  top_n: 3,
  return_documents: true,
  metadata: { team: 'search' },
};

describe('createCohereProvider - rerank', () => {
  it('POSTs the v2 body to {baseUrl}/rerank: documents as strings, no return_documents', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('cohere-rerank-v2.json')] });
    const options = call();
    await createCohereProvider(fake.http).rerank.rerank(request, target, options);
    expect(fake.calls).toHaveLength(1);
    const [sent] = fake.calls;
    expect(sent?.url).toBe('https://api.cohere.com/v2/rerank');
    expect(sent?.init.method).toBe('POST');
    expect(sent?.init.signal).toBe(options.signal);
    expect(sent?.init.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer co-test',
      'x-client-name': 'tollgate',
    });
    expect(JSON.parse(sent?.init.body ?? '')).toEqual({
      model: 'rerank-v3.5',
      query: 'What is the capital of the United States?',
      documents,
      top_n: 3,
    });
  });

  it('provider headers replace ours whatever their case; no key means no authorization header', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('cohere-rerank-v2.json')] });
    const provider = createCohereProvider(fake.http);
    const custom = {
      ...target,
      provider: { ...target.provider, headers: { Authorization: 'Bearer other' } },
    };
    await provider.rerank.rerank(request, custom, call());
    const keyless = { ...target, provider: { ...target.provider, apiKey: null, headers: {} } };
    await provider.rerank.rerank(request, keyless, call());
    expect(fake.calls.map((c) => c.init.headers)).toEqual([
      { 'content-type': 'application/json', authorization: 'Bearer other' },
      { 'content-type': 'application/json' },
    ]);
  });

  it('reads the v2 answer: its id, the results best first, the billed search units', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('cohere-rerank-v2.json')] });
    const result = await createCohereProvider(fake.http).rerank.rerank(request, target, call());
    expect(result).toEqual({
      id: '07734bd2-2473-4f07-94e1-0d9f0e6843cf',
      results: [
        { index: 3, relevance_score: 0.999071 },
        { index: 4, relevance_score: 0.7867867 },
        { index: 0, relevance_score: 0.32713068 },
      ],
      searchUnits: 1,
    });
  });

  it('sorts results received out of order, and gives null search units when meta has none', async () => {
    const body = {
      id: 'r-1',
      results: [
        { index: 0, relevance_score: 0.2 },
        { index: 1, relevance_score: 0.7 },
      ],
      meta: { api_version: { version: '2' } },
    };
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(body))] });
    const result = await createCohereProvider(fake.http).rerank.rerank(request, target, call());
    expect(result).toEqual({
      id: 'r-1',
      results: [
        { index: 1, relevance_score: 0.7 },
        { index: 0, relevance_score: 0.2 },
      ],
      searchUnits: null,
    });
  });

  it('the documented 400 body gives its message; Retry-After is read', async () => {
    const fake = fakeHttp({
      status: 400,
      headers: { 'Retry-After': '4' },
      pieces: [fixtureBytes('cohere-error-400.json')],
    });
    const error = await rejection(createCohereProvider(fake.http).rerank.rerank(request, target, call()));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'http',
      status: 400,
      retryAfterMs: 4000,
      message: 'invalid request: list of documents must not be empty',
    });
  });

  it('an {id, message} error body gives the message', async () => {
    const body = '{"id":"a1b2","message":"invalid api token"}';
    const fake = fakeHttp({ status: 401, pieces: [bytes(body)] });
    const error = await rejection(createCohereProvider(fake.http).rerank.rerank(request, target, call()));
    expect(error).toMatchObject({ kind: 'http', status: 401, message: 'invalid api token' });
  });
});
