import { describe, expect, it } from 'vitest';
import { createDemoProvider } from './demo-provider.js';
import { demoRelevance } from './demo-rerank.js';
import { demoCall, demoTarget } from './demo-target.test-support.js';

const demo = createDemoProvider();
const target = demoTarget('rerank-small');

describe('demo rerank: relevance from term overlap', () => {
  it.each([
    ['every query word present, any case', 'Capital of France', 'Paris is the capital of france.', 1],
    ['two of three words', 'capital of france', 'the capital of Spain', 0.6667],
    ['no word in common', 'capital of france', 'bananas are yellow', 0],
    ['repeated query words count once', 'cat cat dog', 'a cat', 0.5],
    ['a query with no word', '?!', 'anything', 0],
  ])('%s', (_what, query, document, score) => {
    expect(demoRelevance(query, document)).toBe(score);
  });

  it('ranks the documents best first (ties in their order), through the OpenAI adapter', async () => {
    const documents = [
      'bananas are yellow',
      'the capital of Spain',
      'Paris is the capital of France',
      'kiwis',
    ];
    const result = await demo.rerank.rerank(
      { model: 'demo/rerank-small', query: 'capital of France', documents },
      target,
      demoCall(),
    );
    expect(result).toEqual({
      id: null,
      results: [
        { index: 2, relevance_score: 1 },
        { index: 1, relevance_score: 0.6667 },
        { index: 0, relevance_score: 0 },
        { index: 3, relevance_score: 0 },
      ],
      searchUnits: null,
    });
  });

  it('honours top_n, and takes {text} documents', async () => {
    const result = await demo.rerank.rerank(
      {
        model: 'demo/rerank-small',
        query: 'red fox',
        documents: [{ text: 'a red car' }, 'the red fox'],
        top_n: 1,
      },
      target,
      demoCall(),
    );
    expect(result.results).toEqual([{ index: 1, relevance_score: 1 }]);
  });
});
