import { describe, expect, it } from 'vitest';
import type { RerankRequest } from '../inference-types.js';
import { UpstreamError } from '../upstream-error.js';
import { fixtureBytes } from '../wire-fixtures.test-support.js';
import { bytes, call, fakeHttp, rejection, target } from './fake-http-client.test-support.js';
import { createOpenAIProvider } from './openai-provider.js';

const rerankTarget = { ...target, upstreamModel: 'jina-reranker-v2-base-multilingual' };
const request: RerankRequest = {
  model: 'jina/reranker',
  query: 'Organic skincare products for sensitive skin',
  documents: [
    'Organic skincare for sensitive skin with aloe vera and chamomile...',
    { text: 'New makeup trends focus on bold colors and innovative techniques...' },
    'Bio-Hautpflege für empfindliche Haut mit Aloe Vera und Kamille...',
  ],
  top_n: 3,
  return_documents: true,
  metadata: { team: 'search' },
  max_tokens_per_doc: 512,
};

describe('createOpenAIProvider - rerank (Jina/vLLM shape)', () => {
  it('POSTs {model, query, documents as strings, top_n, return_documents} to {baseUrl}/rerank', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('jina-rerank.json')] });
    const options = call();
    await createOpenAIProvider(fake.http).rerank.rerank(request, rerankTarget, options);
    const [sent] = fake.calls;
    expect(sent?.url).toBe('https://api.example.com/v1/rerank');
    expect(sent?.init.signal).toBe(options.signal);
    expect(sent?.init.headers).toEqual({
      'content-type': 'application/json',
      authorization: 'Bearer sk-test',
      'openai-organization': 'org-1',
    });
    expect(JSON.parse(sent?.init.body ?? '')).toEqual({
      model: 'jina-reranker-v2-base-multilingual',
      query: 'Organic skincare products for sensitive skin',
      documents: [
        'Organic skincare for sensitive skin with aloe vera and chamomile...',
        'New makeup trends focus on bold colors and innovative techniques...',
        'Bio-Hautpflege für empfindliche Haut mit Aloe Vera und Kamille...',
      ],
      top_n: 3,
      return_documents: true,
    });
  });

  it('leaves out top_n and return_documents when the caller did', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('jina-rerank.json')] });
    const { top_n: _n, return_documents: _r, ...bare } = request;
    await createOpenAIProvider(fake.http).rerank.rerank(bare, rerankTarget, call());
    expect(Object.keys(JSON.parse(fake.calls[0]?.init.body ?? ''))).toEqual(['model', 'query', 'documents']);
  });

  it('reads the Jina answer: no id, indexes and scores only, no search units', async () => {
    const fake = fakeHttp({ status: 200, pieces: [fixtureBytes('jina-rerank.json')] });
    const result = await createOpenAIProvider(fake.http).rerank.rerank(request, rerankTarget, call());
    expect(result).toEqual({
      id: null,
      results: [
        { index: 0, relevance_score: 0.8783142566680908 },
        { index: 2, relevance_score: 0.7624675869941711 },
      ],
      searchUnits: null,
    });
  });

  it('sorts the results best first, equal scores in the order received, and keeps a vLLM id', async () => {
    const body = {
      id: 'rerank-1',
      model: 'bge-reranker',
      usage: { total_tokens: 30 },
      results: [
        { index: 1, relevance_score: 0.1, document: { text: 'b' } },
        { index: 2, relevance_score: 0.9, document: { text: 'c' } },
        { index: 0, relevance_score: 0.1, document: { text: 'a' } },
      ],
    };
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(body))] });
    const result = await createOpenAIProvider(fake.http).rerank.rerank(request, rerankTarget, call());
    expect(result).toEqual({
      id: 'rerank-1',
      results: [
        { index: 2, relevance_score: 0.9 },
        { index: 1, relevance_score: 0.1 },
        { index: 0, relevance_score: 0.1 },
      ],
      searchUnits: null,
    });
  });

  it('an index past the documents makes the answer unreadable (http 502)', async () => {
    const body = { results: [{ index: 3, relevance_score: 0.5 }] };
    const fake = fakeHttp({ status: 200, pieces: [bytes(JSON.stringify(body))] });
    const error = await rejection(
      createOpenAIProvider(fake.http).rerank.rerank(request, rerankTarget, call()),
    );
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      kind: 'http',
      status: 502,
      message: 'openai: unreadable answer (result index 3 is past the 3 documents)',
    });
  });
});
