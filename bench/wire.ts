import { readFileSync } from 'node:fs';

/*
 * The mock upstream's answers, in the wire shape of a real OpenAI recording
 * (test/fixtures/wire/openai-chat-stream-text-include-usage.chunks.txt, gpt-4.1-nano, 2026): one
 * role chunk, one chunk per content token, a `finish_reason` chunk, a usage chunk with `choices: []`,
 * then `data: [DONE]`. Synthetic so a fresh clone needs no fixture; `--fixture` replays a recording.
 */

const ID = 'chatcmpl-BenchD8Z5oo6uDh67AD85p73ks';
const CREATED = 1770933892;
const MODEL = 'gpt-4o-mini-2024-07-18';
const PROMPT_TOKENS = 16;
/** The recording's first tokens, cycled to reach N. */
const TOKENS = [
  '**',
  'Holiday',
  ' Name',
  ':**',
  ' Harmony',
  ' Day',
  '\n\n',
  '**',
  'Date',
  ':**',
  ' Celebr',
  'ated',
];
const head = {
  id: ID,
  object: 'chat.completion.chunk',
  created: CREATED,
  model: MODEL,
  service_tier: 'default',
};
const fingerprint = { system_fingerprint: 'fp_de604bd877' };

function chunk(choices: unknown[], usage: unknown, obfuscation: string): string {
  return JSON.stringify({ ...head, ...fingerprint, choices, usage, obfuscation });
}

function token(i: number): string {
  return TOKENS[i % TOKENS.length] as string;
}

function usage(completionTokens: number) {
  return {
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: completionTokens,
    total_tokens: PROMPT_TOKENS + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

/** The JSON payloads (one per `data:` line, no `[DONE]`) of a stream with `n` content chunks. */
export function syntheticChunkLines(n: number): string[] {
  const lines = [
    chunk(
      [
        {
          index: 0,
          delta: { role: 'assistant', content: '', refusal: null },
          logprobs: null,
          finish_reason: null,
        },
      ],
      null,
      'KRRWkk',
    ),
  ];
  for (let i = 0; i < n; i++) {
    lines.push(
      chunk([{ index: 0, delta: { content: token(i) }, logprobs: null, finish_reason: null }], null, 'zap0'),
    );
  }
  lines.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], null, 'zap0'));
  lines.push(chunk([], usage(n), 'h9RiQLL'));
  return lines;
}

/** A recorded `.chunks.txt` file (OpenAI format) as its JSON payload lines, byte-exact. */
export function recordedChunkLines(path: string): string[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0);
}

/** SSE events as written on the wire: `data: <payload>\n\n` each, then `data: [DONE]\n\n`. */
export function sseEvents(lines: string[]): Buffer[] {
  return [...lines.map((line) => Buffer.from(`data: ${line}\n\n`)), Buffer.from('data: [DONE]\n\n')];
}

/** The non-streamed completion with the same `n` tokens of content and the same usage. */
export function completionJson(n: number): Buffer {
  let content = '';
  for (let i = 0; i < n; i++) content += token(i);
  return Buffer.from(
    JSON.stringify({
      id: ID,
      object: 'chat.completion',
      created: CREATED,
      model: MODEL,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: usage(n),
      service_tier: 'default',
      ...fingerprint,
    }),
  );
}

/** The body a client sends; `stream` adds `"stream": true`. */
export function chatRequestBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: 'Name a holiday and say what it celebrates.' }],
    max_tokens: 1024,
    ...(stream && { stream: true }),
  });
}

/** The same request on the Anthropic Messages API; `stream` adds `"stream": true`. */
export function messagesRequestBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    max_tokens: 1024,
    messages: [{ role: 'user', content: 'Name a holiday and say what it celebrates.' }],
    ...(stream && { stream: true }),
  });
}

/**
 * The same request on the Responses wire (`POST /v1/responses`): the question as `input`, the same
 * output ceiling. Tollgate translates it to the chat call above, so the mock answers it alike.
 */
export function responsesRequestBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    input: 'Name a holiday and say what it celebrates.',
    max_output_tokens: 1024,
    ...(stream && { stream: true }),
  });
}

/** The forwarding check: a model whose name contains `paced` gets this many content chunks, spaced out. */
export const PACED = { contentChunks: 10, gapMs: 10 } as const;

/*
 * Embeddings, in OpenAI's shape: `{object: "list", data: [{object: "embedding", index, embedding}],
 * model, usage: {prompt_tokens, total_tokens}}`, one item per input. The vector is small and fixed so
 * the mock's cost is serialising nothing: each answer is built once per input count.
 */

const EMBEDDING_MODEL = 'text-embedding-3-small';
/** Floats per vector. */
export const EMBEDDING_DIMENSIONS = 16;
/** Tokens the mock reports per input. */
const EMBEDDING_TOKENS_PER_INPUT = 11;
const VECTOR = Array.from({ length: EMBEDDING_DIMENSIONS }, (_, i) => Number(Math.sin(i + 1).toFixed(7)));

/** The embeddings answer for `inputs` inputs. */
export function embeddingsJson(inputs: number): Buffer {
  const tokens = inputs * EMBEDDING_TOKENS_PER_INPUT;
  return Buffer.from(
    JSON.stringify({
      object: 'list',
      data: Array.from({ length: inputs }, (_, index) => ({ object: 'embedding', index, embedding: VECTOR })),
      model: EMBEDDING_MODEL,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    }),
  );
}

/** How many inputs an embeddings request carries (a string or one token array is one). */
export function embeddingInputCount(input: unknown): number {
  if (!Array.isArray(input)) return 1;
  return input.length > 0 && typeof input[0] === 'number' ? 1 : input.length;
}

/** The input the bench embeds: one short sentence. */
export const EMBEDDINGS_INPUT = ['a short sentence of about ten words for the embedding bench'];

/** The embeddings body a client sends. */
export function embeddingsRequestBody(model: string): string {
  return JSON.stringify({ model, input: EMBEDDINGS_INPUT });
}
