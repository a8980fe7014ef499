import type { InferenceBody, InferenceOperation } from '../../pipeline/inference-operation.js';
import { mapChunks } from '../../providers/sse-chunks.js';
import type { SearchResult } from './search-types.js';

/** OpenAI's citation annotation, one per search result. */
interface UrlCitation {
  type: 'url_citation';
  url_citation: { url: string; title: string };
}

export function urlCitations(results: readonly SearchResult[]): UrlCitation[] {
  return results.map((r) => ({ type: 'url_citation', url_citation: { url: r.url, title: r.title } }));
}

type Json = Record<string, unknown>;

/**
 * The operation with the citations added to what it answers: on a JSON answer,
 * `choices[*].message.annotations`; on a stream, `choices[0].delta.annotations` of the first chunk
 * that has a choice (the role chunk, normally), so they arrive before any content and well before
 * the terminal chunk. Annotations the provider sent are kept, ours follow them.
 */
export function withCitations<Body extends InferenceBody>(
  op: InferenceOperation<Body>,
  citations: UrlCitation[],
): InferenceOperation<Body> {
  if (citations.length === 0) return op;
  const stream = op.stream;
  return {
    ...op,
    async call(adapter, body, target, options) {
      const answer = (await op.call(adapter, body, target, options)) as { completion?: Json };
      for (const choice of choicesOf(answer.completion)) {
        const message = choice.message as Json | undefined;
        if (message && typeof message === 'object')
          message.annotations = merged(message.annotations, citations);
      }
      return answer;
    },
    ...(stream && {
      stream: {
        ...stream,
        async open(adapter, body, target, options) {
          const opened = await stream.open(adapter, body, target, options);
          return { ...opened, chunks: annotateFirst(opened.chunks, citations) };
        },
      },
    }),
  };
}

/** The chunks with the citations on the first that has a choice; batches of chunks kept as they come. */
function annotateFirst(chunks: AsyncIterable<unknown>, citations: UrlCitation[]) {
  let pending = true;
  return mapChunks(chunks, (chunk) => {
    if (pending) {
      const choice = choicesOf(chunk as Json)[0];
      if (choice) {
        const delta = (choice.delta ?? {}) as Json;
        delta.annotations = merged(delta.annotations, citations);
        choice.delta = delta;
        pending = false;
      }
    }
    return chunk;
  });
}

function choicesOf(value: Json | undefined | null): Json[] {
  const choices = value?.choices;
  return Array.isArray(choices) ? (choices.filter((c) => c && typeof c === 'object') as Json[]) : [];
}

function merged(existing: unknown, citations: UrlCitation[]): unknown[] {
  return [...(Array.isArray(existing) ? existing : []), ...citations];
}
