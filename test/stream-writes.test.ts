import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exaAnswer, RESULTS } from './web-search/web-search-config.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

const CONTENT_CHUNKS = 100;

/** An OpenAI stream (role chunk, `CONTENT_CHUNKS` one-word deltas, finish, usage, `[DONE]`) as one body. */
function upstreamStream(): string {
  const chunk = (choices: unknown[], usage: unknown = null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices, usage, obfuscation: 'x' })}\n\n`;
  let body = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (let i = 0; i < CONTENT_CHUNKS; i++) {
    body += chunk([{ index: 0, delta: { content: `w${i} ` }, finish_reason: null }]);
  }
  body += chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  body += chunk([], {
    prompt_tokens: 7,
    completion_tokens: CONTENT_CHUNKS,
    total_tokens: 7 + CONTENT_CHUNKS,
  });
  return `${body}data: [DONE]\n\n`;
}

/** The `data:` payloads of each piece the gateway's body gave, piece by piece. */
async function piecesOf(response: Response): Promise<string[][]> {
  const decoder = new TextDecoder();
  const pieces: string[][] = [];
  let rest = '';
  const reader = response.body!.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    rest += decoder.decode(read.value, { stream: true });
    const events = rest.split('\n\n');
    rest = events.pop()!;
    pieces.push(events.map((event) => event.replace(/^data: /, '')));
  }
  expect(rest).toBe('');
  return pieces;
}

/**
 * How a stream leaves the gateway when its upstream delivers it all in one read (`metered-stream.ts`):
 * the chunks up to the first with output leave first, without waiting for the rest; then the others
 * that need no further read leave together, in one write; every chunk is forwarded once, in
 * order, and the request is metered from the provider's usage.
 */
describe('a stream the upstream sends in one read (in-process gateway)', () => {
  let gw: TestGateway;

  beforeAll(async () => {
    gw = await createTestGateway({
      providers: {
        main: { format: 'openai', base_url: 'http://upstream.test/v1', api_key: 'sk-main' },
        exa: { format: 'web-search', base_url: 'http://exa.test', api_key: 'exa-key' },
      },
      models: [
        {
          id: 'acme/m',
          max_output_tokens: 1000,
          endpoints: [{ provider: 'main', upstream_model: 'm-1', pricing: { prompt: '1', completion: '2' } }],
        },
      ],
    });
    gw.upstream('exa').always(200, exaAnswer());
    // The whole stream as one body: one read.
    gw.upstream('main').always(200, upstreamStream(), { 'content-type': 'text/event-stream' });
  });

  afterAll(() => gw?.close());

  it('sends the first token at once, then the rest of the read in one write, each chunk once and in order', async () => {
    const response = await gw.request('/v1/chat/completions', {
      model: 'acme/m',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    const pieces = await piecesOf(response);
    const chunks: Json[] = pieces
      .flat()
      .slice(0, -1)
      .map((data) => JSON.parse(data));

    // The role chunk and the first content chunk, alone.
    expect(pieces[0]!.map((data) => JSON.parse(data).choices[0].delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'w0 ' },
    ]);
    // Then the other content chunks and the finish chunk in one write, the terminal event and
    // [DONE] in the write that ends the stream.
    expect(pieces.map((piece) => piece.length)).toEqual([2, CONTENT_CHUNKS, 2]);

    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe(Array.from({ length: CONTENT_CHUNKS }, (_, i) => `w${i} `).join(''));
    // Every chunk as the caller sees it: the served model, no usage but on the terminal chunk.
    expect(chunks.slice(0, -1).every((chunk) => chunk.model === 'acme/m' && !('usage' in chunk))).toBe(true);
    const terminal = chunks.at(-1);
    expect(terminal.usage).toMatchObject({ prompt_tokens: 7, completion_tokens: CONTENT_CHUNKS });
    expect(terminal.gateway.cost_micros).toBeGreaterThan(0);
    expect(pieces.flat().at(-1)).toBe('[DONE]');
  });

  it('sends a web-plugin stream the same way, its citations on the role chunk', async () => {
    const response = await gw.request('/v1/chat/completions', {
      model: 'acme/m',
      stream: true,
      plugins: [{ id: 'web' }],
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.status).toBe(200);
    const pieces = await piecesOf(response);
    const [role, first] = pieces[0]!.map((data) => JSON.parse(data).choices[0].delta);
    expect(role.annotations.map((a: Json) => a.url_citation.url)).toEqual(RESULTS.map((r) => r.url));
    expect(first).toEqual({ content: 'w0 ' });
    expect(pieces.map((piece) => piece.length)).toEqual([2, CONTENT_CHUNKS, 2]);
    const text = pieces
      .flat()
      .slice(0, -1)
      .map((data) => JSON.parse(data).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe(Array.from({ length: CONTENT_CHUNKS }, (_, i) => `w${i} `).join(''));
  });
});
