import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CountingGateway, startCountingGateway } from './helpers/counting-storage.js';
import { createTenant } from './helpers/tenant.js';
import { testConfig } from './helpers/test-config.js';

// biome-ignore lint/suspicious/noExplicitAny: answers are read as plain JSON.
type Json = any;

/** How long the scripted provider may stay silent mid-stream (`stream_idle_timeout_ms`). */
const IDLE_MS = 60;
/** How long it may take to answer at all (`timeout_ms`, time to first byte). */
const FIRST_BYTE_MS = 120;
/** Sequences tried per run, of 1–6 requests each. */
const NUM_RUNS = 40;
/** `poor` covers a few image requests (5,000 micros an image at most), then refuses. */
const CREDIT_MICROS = { rich: 10_000_000, poor: 12_000 } as const;

// ── The generated script ─────────────────────────────────────────────────────────────────────────

type Op =
  | 'chat'
  | 'chat_stream'
  | 'messages'
  | 'messages_stream'
  | 'responses'
  | 'responses_stream'
  | 'embeddings'
  | 'images'
  | 'rerank'
  | 'invalid';

/** How one upstream attempt ends. Attempts past the end of a request's list end as its `rest`. */
type Attempt =
  | { kind: 'ok' }
  /** A success with nothing in it: an empty chat answer, no images, no embeddings tokens, no results. */
  | { kind: 'empty' }
  | { kind: 'status'; status: 503 | 529 | 429 | 500 | 400 | 401; retryAfter: string | null }
  /** The fetch rejects. */
  | { kind: 'network' }
  /** 2xx, but the body is not JSON (a stream: a `data:` line that is not JSON). */
  | { kind: 'not_json' }
  /** 2xx, then the body breaks off after `after` events (JSON: mid-body). */
  | { kind: 'break'; after: number }
  /** Streams: headers and `after` events, then silence. JSON: no answer at all. */
  | { kind: 'stall'; after: number };

/** What the client does with its request. */
type Client =
  | { kind: 'read' }
  /** Aborts the request's signal right after handing it to the gateway. */
  | { kind: 'abort_at_once' }
  /** Aborts the request's signal `delayMs` after upstream attempt number `attempt` of this request starts. */
  | { kind: 'abort_in_attempt'; attempt: number; delayMs: number }
  /**
   * Reads `events` times from the answer's body, then leaves as `how` says: cancels the reader;
   * aborts the signal and cancels; aborts the signal and reads on anyway; or asks for the next event
   * and cancels `delayMs` later, while that read is still pending (e.g. on a stalled stream).
   */
  | {
      kind: 'leave_after';
      events: number;
      how: 'cancel' | 'abort_and_cancel' | 'abort_then_read' | 'cancel_mid_read';
      delayMs: number;
    };

interface Step {
  op: Op;
  /**
   * Chat: 0 the priced model, else the one free on its first route. Messages: 0 the model passed
   * through to an Anthropic route first, else the translated one. Responses: 0 translated only,
   * else native first, then translated. Images: n − 1. Invalid: which body.
   */
  variant: number;
  attempts: Attempt[];
  /** How every attempt past `attempts` ends. */
  rest: Attempt;
  client: Client;
  /** Sent as `Idempotency-Key` (from a pool of two, so replays and conflicts happen); streams ignore it. */
  idempotencyKey: string | null;
}

interface Sequence {
  credit: keyof typeof CREDIT_MICROS;
  concurrent: boolean;
  steps: Step[];
}

const attemptArb: fc.Arbitrary<Attempt> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'ok' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('status' as const),
      status: fc.constantFrom(
        503 as const,
        529 as const,
        429 as const,
        500 as const,
        400 as const,
        401 as const,
      ),
      retryAfter: fc.constantFrom(null, '0', '1', '120'),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'network' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'not_json' as const }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('break' as const), after: fc.nat(6) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('stall' as const), after: fc.nat(6) }) },
);

const restArb: fc.Arbitrary<Attempt> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'ok' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'status' as const, status: 503 as const, retryAfter: null }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'network' as const }) },
);

/** Client waits: at once (0), within a tick, or well into an idle timeout. */
const delayArb = fc.constantFrom(0, 0, 1, 5, IDLE_MS / 2);

const clientArb: fc.Arbitrary<Client> = fc.oneof(
  { weight: 5, arbitrary: fc.constant({ kind: 'read' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'abort_at_once' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('abort_in_attempt' as const),
      attempt: fc.integer({ min: 1, max: 6 }),
      delayMs: delayArb,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('leave_after' as const),
      events: fc.nat(6),
      how: fc.constantFrom(
        'cancel' as const,
        'abort_and_cancel' as const,
        'abort_then_read' as const,
        'cancel_mid_read' as const,
      ),
      delayMs: delayArb,
    }),
  },
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('chat' as const) },
  { weight: 4, arbitrary: fc.constant('chat_stream' as const) },
  { weight: 1, arbitrary: fc.constant('messages' as const) },
  { weight: 3, arbitrary: fc.constant('messages_stream' as const) },
  { weight: 2, arbitrary: fc.constant('responses' as const) },
  { weight: 3, arbitrary: fc.constant('responses_stream' as const) },
  { weight: 1, arbitrary: fc.constant('embeddings' as const) },
  { weight: 1, arbitrary: fc.constant('images' as const) },
  { weight: 1, arbitrary: fc.constant('rerank' as const) },
  { weight: 1, arbitrary: fc.constant('invalid' as const) },
);

const sequenceArb: fc.Arbitrary<Sequence> = fc.record({
  credit: fc.constantFrom('rich' as const, 'poor' as const),
  concurrent: fc.boolean(),
  steps: fc.array(
    fc.record({
      op: opArb,
      variant: fc.nat(2),
      attempts: fc.array(attemptArb, { maxLength: 7 }),
      rest: restArb,
      client: clientArb,
      idempotencyKey: fc.option(fc.constantFrom('idem-a', 'idem-b'), { freq: 4 }),
    }),
    { minLength: 1, maxLength: 6 },
  ),
});

// ── The gateway under test ───────────────────────────────────────────────────────────────────────

const provider = (name: string) => ({
  format: 'openai' as const,
  base_url: `http://upstream.test/${name}/v1`,
  api_key: `sk-${name}`,
  timeout_ms: FIRST_BYTE_MS,
  stream_idle_timeout_ms: IDLE_MS,
});

/** Every model on two providers, so failover is exercised. Prices are USD per 1M tokens / per unit. */
const config = testConfig({
  providers: {
    main: provider('main'),
    spare: provider('spare'),
    claude: { ...provider('claude'), format: 'anthropic' as const },
    // Serves the Responses API itself: `POST /v1/responses` goes there natively.
    nat: { ...provider('nat'), responses: true },
  },
  models: [
    {
      // Passed through on its Anthropic route, translated on its failover.
      id: 'acme/claude',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'claude', upstream_model: 'claude-1', pricing: { prompt: '3', completion: '15' } },
        { provider: 'spare', upstream_model: 'c-2', pricing: { prompt: '2', completion: '3' } },
      ],
    },
    {
      id: 'acme/chat',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'main', upstream_model: 'c-1', pricing: { prompt: '1', completion: '2' } },
        { provider: 'spare', upstream_model: 'c-2', pricing: { prompt: '2', completion: '3' } },
      ],
    },
    {
      // Free on its first route, priced on the second: a success may cost nothing.
      id: 'acme/free',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'main', upstream_model: 'f-1', pricing: { prompt: '0', completion: '0' } },
        { provider: 'spare', upstream_model: 'f-2', pricing: { prompt: '1', completion: '1' } },
      ],
    },
    {
      // Native first, then translated: a failover changes the wire mid-walk.
      id: 'acme/resp',
      max_output_tokens: 100,
      endpoints: [
        {
          provider: 'nat',
          upstream_model: 'r-1',
          pricing: { prompt: '1', completion: '2', cached_prompt: '0.5' },
        },
        { provider: 'main', upstream_model: 'c-1', pricing: { prompt: '2', completion: '3' } },
      ],
    },
    {
      id: 'acme/embed',
      type: 'embedding',
      endpoints: [
        { provider: 'main', upstream_model: 'e-1', pricing: { prompt: '1' } },
        { provider: 'spare', upstream_model: 'e-2', pricing: { prompt: '2' } },
      ],
    },
    {
      id: 'acme/image',
      type: 'image',
      endpoints: [
        { provider: 'main', upstream_model: 'i-1', pricing: { image: '0.004' } },
        { provider: 'spare', upstream_model: 'i-2', pricing: { image: '0.005' } },
      ],
    },
    {
      id: 'acme/rerank',
      type: 'rerank',
      endpoints: [
        { provider: 'main', upstream_model: 'r-1', pricing: { search: '0.002' } },
        { provider: 'spare', upstream_model: 'r-2', pricing: { search: '0.001' } },
      ],
    },
  ],
});

// ── The scripted upstream ────────────────────────────────────────────────────────────────────────

interface Script {
  attempts: Attempt[];
  rest: Attempt;
  calls: number;
  /** Called as each upstream attempt of the request starts (1-based), before it is answered. */
  onCall: (call: number) => void;
}

/** Scripts by the tag each request carries in its prompt / input / query. */
const scripts = new Map<string, Script>();
const unscripted: string[] = [];
const encoder = new TextEncoder();

/** A body that sends `parts` one per pull, then closes, errors or goes silent; it errors when `signal` aborts. */
function scriptedBody(
  parts: string[],
  end: 'close' | 'error' | 'stall',
  signal: AbortSignal | null | undefined,
): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      signal?.addEventListener(
        'abort',
        () => {
          try {
            controller.error(signal.reason);
          } catch {}
        },
        { once: true },
      );
    },
    pull(controller) {
      if (next < parts.length) {
        controller.enqueue(encoder.encode(parts[next++]!));
        return;
      }
      if (end === 'close') controller.close();
      else if (end === 'error') controller.error(new TypeError('terminated'));
      else return new Promise<void>(() => {});
    },
  });
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** The SSE events of a scripted chat stream, `[DONE]` last. */
function chatEvents(empty: boolean): string[] {
  const events: unknown[] = [chunk({ role: 'assistant', content: '' })];
  if (!empty)
    events.push(chunk({ content: 'Hello ' }), chunk({ content: 'there, ' }), chunk({ content: 'friend.' }));
  events.push(chunk({}, 'stop'), {
    ...chunk({}),
    choices: [],
    usage: { prompt_tokens: 9, completion_tokens: empty ? 0 : 4, total_tokens: empty ? 9 : 13 },
  });
  return [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'];
}

/** The SSE events of a scripted Anthropic stream, `message_stop` last. */
function anthropicEvents(empty: boolean): string[] {
  const text = (t: string) => ({
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'text_delta', text: t },
  });
  const events: Json[] = [
    {
      type: 'message_start',
      message: { id: 'msg_up', model: 'claude-1', content: [], usage: { input_tokens: 9 } },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...(empty ? [] : [text('Hello '), text('there, '), text('friend.')]),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: empty ? 0 : 4 } },
    { type: 'message_stop' },
  ];
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
}

/** The SSE events of a scripted native Responses stream, the terminal `response.completed` last. */
function responsesEvents(empty: boolean): string[] {
  const texts = empty ? [] : ['Hello ', 'there, ', 'friend.'];
  const item = { id: 'msg_up', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
  const at = { item_id: 'msg_up', output_index: 0, content_index: 0 };
  const part = (text: string) => ({ type: 'output_text', text, annotations: [] });
  const events: Record<string, unknown>[] = [
    { type: 'response.created', response: { id: 'resp_up', status: 'in_progress', output: [] } },
    { type: 'response.in_progress', response: { id: 'resp_up', status: 'in_progress', output: [] } },
  ];
  if (!empty) {
    events.push(
      { type: 'response.output_item.added', output_index: 0, item },
      { type: 'response.content_part.added', ...at, part: part('') },
      ...texts.map((delta) => ({ type: 'response.output_text.delta', ...at, delta })),
      { type: 'response.output_text.done', ...at, text: texts.join('') },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { ...item, status: 'completed', content: [part(texts.join(''))] },
      },
    );
  }
  events.push({ type: 'response.completed', response: responsesAnswer(empty) });
  return events.map(
    (event, i) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: i })}\n\n`,
  );
}

/** A scripted native Response: one message, or nothing. */
function responsesAnswer(empty: boolean) {
  const text = 'Hello there, friend.';
  return {
    id: 'resp_up',
    object: 'response',
    status: 'completed',
    output: empty
      ? []
      : [
          {
            id: 'msg_up',
            type: 'message',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text, annotations: [] }],
          },
        ],
    usage: {
      input_tokens: 9,
      input_tokens_details: { cached_tokens: 4 },
      output_tokens: empty ? 0 : 4,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: empty ? 9 : 13,
    },
  };
}

/** The stream a scripted success sends, by upstream path. */
const streamEvents = (path: string, empty: boolean) =>
  path.endsWith('/responses')
    ? responsesEvents(empty)
    : path.endsWith('/messages')
      ? anthropicEvents(empty)
      : chatEvents(empty);

/** The JSON answer of a scripted success, by upstream path. */
function jsonAnswer(path: string, body: Json, empty: boolean): unknown {
  if (path.endsWith('/messages')) {
    return {
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: empty ? [] : [{ type: 'text', text: 'Hello!' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 9, output_tokens: empty ? 0 : 3 },
    };
  }
  if (path.endsWith('/chat/completions')) {
    return {
      id: 'chatcmpl-up',
      object: 'chat.completion',
      created: 1,
      model: body.model,
      choices: [
        { index: 0, message: { role: 'assistant', content: empty ? '' : 'Hello!' }, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 9, completion_tokens: empty ? 0 : 3, total_tokens: empty ? 9 : 12 },
    };
  }
  if (path.endsWith('/responses')) return responsesAnswer(empty);
  if (path.endsWith('/embeddings')) {
    return {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.25, -0.5] }],
      model: body.model,
      usage: { prompt_tokens: empty ? 0 : 7, total_tokens: empty ? 0 : 7 },
    };
  }
  if (path.endsWith('/images/generations')) {
    const n = empty ? 0 : typeof body.n === 'number' ? body.n : 1;
    return { created: 1, data: Array.from({ length: n }, (_, i) => ({ url: `https://img.test/${i}.png` })) };
  }
  if (path.endsWith('/rerank')) {
    const documents = (body.documents as unknown[]).length;
    return {
      id: 'rr-up',
      results: empty
        ? []
        : Array.from({ length: documents }, (_, index) => ({ index, relevance_score: 1 / (index + 1) })),
      usage: { total_tokens: 12 },
    };
  }
  throw new Error(`no scripted answer for ${path}`);
}

/** Never settles until `signal` aborts, then rejects with its reason (a provider that never answers). */
function silence(signal: AbortSignal | null | undefined): Promise<never> {
  return new Promise((_, reject) =>
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}

const scriptedUpstream: typeof fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const text = typeof init?.body === 'string' ? init.body : '';
  const tag = /tag-\d+-\d+/.exec(text)?.[0];
  const script = tag ? scripts.get(tag) : undefined;
  if (!script) {
    unscripted.push(`${url.pathname} ${text.slice(0, 200)}`);
    throw new Error('unscripted upstream call');
  }
  script.calls++;
  script.onCall(script.calls);
  const signal = init?.signal;
  if (signal?.aborted) throw signal.reason;
  const attempt = script.attempts[script.calls - 1] ?? script.rest;
  const body = JSON.parse(text) as Json;
  const streams = body.stream === true;
  switch (attempt.kind) {
    case 'network':
      throw new TypeError('fetch failed');
    case 'status':
      return Response.json(
        { error: { message: `scripted ${attempt.status}`, type: 'scripted' } },
        {
          status: attempt.status,
          headers: attempt.retryAfter === null ? {} : { 'retry-after': attempt.retryAfter },
        },
      );
    case 'not_json':
      return new Response(
        scriptedBody(streams ? ['data: {"choices": [oops\n\n'] : ['{"not json'], 'close', signal),
        { status: 200, headers: { 'content-type': streams ? 'text/event-stream' : 'application/json' } },
      );
    case 'break':
      if (streams) {
        return new Response(
          scriptedBody(streamEvents(url.pathname, false).slice(0, attempt.after), 'error', signal),
          {
            headers: { 'content-type': 'text/event-stream' },
          },
        );
      }
      return new Response(scriptedBody(['{"id": "x", "object": "chat.comp'], 'error', signal), {
        headers: { 'content-type': 'application/json' },
      });
    case 'stall':
      if (streams) {
        return new Response(
          scriptedBody(streamEvents(url.pathname, false).slice(0, attempt.after), 'stall', signal),
          {
            headers: { 'content-type': 'text/event-stream' },
          },
        );
      }
      return silence(signal);
    case 'ok':
    case 'empty':
      if (streams) {
        return new Response(
          scriptedBody(streamEvents(url.pathname, attempt.kind === 'empty'), 'close', signal),
          {
            headers: { 'content-type': 'text/event-stream' },
          },
        );
      }
      return new Response(
        scriptedBody(
          [JSON.stringify(jsonAnswer(url.pathname, body, attempt.kind === 'empty'))],
          'close',
          signal,
        ),
        { headers: { 'content-type': 'application/json' } },
      );
  }
};

// ── Driving one request ──────────────────────────────────────────────────────────────────────────

/** The path and body of a step's request; `tag` routes the upstream calls to its script. */
function requestOf(step: Step, tag: string): { path: string; body: unknown } {
  const messages = [{ role: 'user', content: `${tag}: say hello` }];
  const chatModel = step.variant === 0 ? 'acme/chat' : 'acme/free';
  switch (step.op) {
    case 'chat':
      return { path: '/v1/chat/completions', body: { model: chatModel, messages, max_tokens: 20 } };
    case 'chat_stream':
      return {
        path: '/v1/chat/completions',
        body: { model: chatModel, messages, max_tokens: 20, stream: true },
      };
    case 'messages':
    case 'messages_stream':
      return {
        path: '/v1/messages',
        body: {
          model: step.variant === 0 ? 'acme/claude' : 'acme/chat',
          max_tokens: 20,
          messages,
          ...(step.op === 'messages_stream' && { stream: true }),
        },
      };
    case 'responses':
    case 'responses_stream':
      return {
        path: '/v1/responses',
        body: {
          model: step.variant === 0 ? 'acme/chat' : 'acme/resp',
          input: `${tag}: say hello`,
          max_output_tokens: 20,
          ...(step.op === 'responses_stream' && { stream: true }),
        },
      };
    case 'embeddings':
      return { path: '/v1/embeddings', body: { model: 'acme/embed', input: `${tag}: embed these words` } };
    case 'images':
      return {
        path: '/v1/images/generations',
        body: { model: 'acme/image', prompt: `${tag}: a lighthouse`, n: step.variant + 1 },
      };
    case 'rerank':
      return {
        path: '/v1/rerank',
        body: { model: 'acme/rerank', query: tag, documents: ['alpha', { text: 'beta' }, 'gamma'] },
      };
    case 'invalid':
      // Refused before any hold: a body that fails validation, a model nobody serves, a model of another type.
      return [
        { path: '/v1/chat/completions', body: { model: 'acme/chat', messages: 'not a list' } },
        { path: '/v1/chat/completions', body: { model: 'acme/nobody', messages } },
        { path: '/v1/embeddings', body: { model: 'acme/chat', input: tag } },
      ][step.variant]!;
  }
}

/** What the client saw of one request. */
interface Seen {
  step: number;
  requestId: string | null;
  status: number | null;
  /** `gateway.cost_micros` of a JSON answer or of a stream's terminal event, when it got that far. */
  shownCost: number | null;
  note: string;
}

/**
 * The `gateway` object of the last data event of an SSE text (the terminal event), if any: chat's
 * terminal chunk carries it, a Responses terminal event in its `response`.
 */
function terminalGateway(text: string): Json | null {
  const datas = text
    .split('\n\n')
    .map((event) =>
      event
        .split('\n')
        .find((line) => line.startsWith('data: '))
        ?.slice('data: '.length),
    )
    .filter((data): data is string => data !== undefined && data !== '[DONE]');
  const last = datas.at(-1);
  if (last === undefined) return null;
  try {
    const event = JSON.parse(last) as Json;
    return event.gateway ?? event.response?.gateway ?? null;
  } catch {
    return null;
  }
}

function shownCostOf(gateway: Json | null): number | null {
  if (!gateway || typeof gateway.cost_micros !== 'number') return null;
  return gateway.cost_micros;
}

async function readRest(reader: ReadableStreamDefaultReader<Uint8Array>, sofar: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = sofar;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text;
    text += decoder.decode(value, { stream: true });
  }
}

async function runStep(
  gw: CountingGateway,
  key: string,
  step: Step,
  index: number,
  tag: string,
): Promise<Seen> {
  const controller = new AbortController();
  const { client } = step;
  const abort = () => controller.abort(new Error('client gone'));
  scripts.set(tag, {
    attempts: step.attempts,
    rest: step.rest,
    calls: 0,
    onCall: (call) => {
      if (client.kind !== 'abort_in_attempt' || call !== client.attempt) return;
      if (client.delayMs === 0) abort();
      else setTimeout(abort, client.delayMs);
    },
  });
  const { path, body } = requestOf(step, tag);
  const request = new Request(`http://gateway.test${path}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      ...(step.idempotencyKey !== null && { 'idempotency-key': step.idempotencyKey }),
    },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const pending = gw.gateway.fetch(request);
  if (client.kind === 'abort_at_once') abort();
  let response: Response;
  try {
    response = await pending;
  } catch (error) {
    return {
      step: index,
      requestId: null,
      status: null,
      shownCost: null,
      note: `fetch threw ${String(error)}`,
    };
  }
  const seen: Seen = {
    step: index,
    requestId: response.headers.get('x-gateway-request-id'),
    status: response.status,
    shownCost: null,
    note: '',
  };
  const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  try {
    if (!isStream) {
      if (client.kind === 'leave_after') {
        await response.body?.cancel();
        return seen;
      }
      const answer = (await response.json()) as Json;
      if (response.status === 200) seen.shownCost = shownCostOf(answer.gateway);
      return seen;
    }
    const reader = response.body!.getReader();
    if (client.kind !== 'leave_after') {
      seen.shownCost = shownCostOf(terminalGateway(await readRest(reader, '')));
      return seen;
    }
    const decoder = new TextDecoder();
    let text = '';
    for (let i = 0; i < client.events; i++) {
      const { done, value } = await reader.read();
      if (done) {
        seen.shownCost = shownCostOf(terminalGateway(text));
        return seen;
      }
      text += decoder.decode(value, { stream: true });
    }
    if (client.how === 'abort_then_read') {
      abort();
      seen.shownCost = shownCostOf(terminalGateway(await readRest(reader, text)));
      return seen;
    }
    if (client.how === 'cancel_mid_read') {
      const pendingRead = reader.read().catch(() => null);
      await new Promise((resolve) => setTimeout(resolve, client.delayMs));
      await reader.cancel();
      await pendingRead;
    } else {
      if (client.how === 'abort_and_cancel') abort();
      await reader.cancel();
    }
    seen.note = `left after ${client.events} events`;
  } catch (error) {
    seen.note = `reading threw ${String(error)}`;
  }
  return seen;
}

// ── The invariants ───────────────────────────────────────────────────────────────────────────────

const num = (value: unknown) => Number(value);

async function waitForSettles(gw: CountingGateway, accountId: string, expected: number): Promise<void> {
  const deadline = Date.now() + 2_000;
  for (;;) {
    const [row] = gw.raw(
      `SELECT count(*) AS n, coalesce(sum(status = 'in_progress'), 0) AS open FROM request_records WHERE account_id = ?`,
      accountId,
    );
    if ((num(row?.n) >= expected && num(row?.open) === 0) || Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function violationsOf(
  gw: CountingGateway,
  accountId: string,
  credit: number,
  requests: number,
  seen: Seen[],
): Promise<string[]> {
  const out: string[] = [];
  const records = gw
    .raw('SELECT id, status, http_status, cost_micros FROM request_records WHERE account_id = ?', accountId)
    .map((r) => ({
      id: String(r.id),
      status: String(r.status),
      httpStatus: num(r.http_status),
      cost: num(r.cost_micros),
    }));
  const ledger = gw
    .raw('SELECT kind, amount_micros, request_id FROM ledger_entries WHERE account_id = ?', accountId)
    .map((e) => ({
      kind: String(e.kind),
      amount: num(e.amount_micros),
      requestId: e.request_id as string | null,
    }));
  const recordById = new Map(records.map((r) => [r.id, r]));

  // One record per request, refusals included; none left in progress.
  if (records.length !== requests) out.push(`${records.length} request records for ${requests} requests`);
  if (recordById.size !== records.length) out.push('a request id has more than one record');
  for (const r of records) if (r.status === 'in_progress') out.push(`record ${r.id} is still in_progress`);
  for (const s of seen) {
    if (s.requestId !== null && !recordById.has(s.requestId))
      out.push(`step ${s.step}: request ${s.requestId} (HTTP ${s.status}) has no record`);
  }

  // Exactly one settle per request that took a hold, never two, and none without a hold.
  const holds = [...gw.counts.holds.entries()].filter(([, h]) => h.accountId === accountId);
  const held = new Set(holds.map(([id]) => id));
  for (const id of held) {
    const settles = gw.counts.settles.get(id) ?? 0;
    if (settles !== 1) out.push(`request ${id} took a hold and was settled ${settles} times`);
    if (!recordById.has(id)) out.push(`request ${id} took a hold and has no record`);
    const inserted = gw.counts.inserts.get(id);
    if (inserted)
      out.push(`request ${id} took a hold but was also written outside its settle (${inserted.join(', ')})`);
  }
  for (const r of records) {
    if (!held.has(r.id) && gw.counts.settles.has(r.id))
      out.push(`request ${r.id} was settled without a hold`);
    if (!held.has(r.id) && r.cost !== 0)
      out.push(`request ${r.id} (${r.status}) took no hold but costs ${r.cost}`);
  }

  // One `charge` per record with a cost, of that amount; none for a record that cost nothing.
  const charges = ledger.filter((e) => e.kind === 'charge');
  for (const r of records) {
    const mine = charges.filter((e) => e.requestId === r.id);
    if (r.cost > 0 && (mine.length !== 1 || mine[0]!.amount !== -r.cost)) {
      out.push(
        `record ${r.id} (${r.status}) costs ${r.cost} but its charges are [${mine.map((e) => e.amount)}]`,
      );
    }
    if (r.cost === 0 && mine.length > 0) out.push(`record ${r.id} (${r.status}) costs 0 but was charged`);
    if (r.cost < 0) out.push(`record ${r.id} has a negative cost ${r.cost}`);
  }
  for (const e of charges) {
    if (e.requestId === null || !recordById.has(e.requestId))
      out.push(`a charge of ${e.amount} names no record of the account (${e.requestId})`);
  }

  // No hold left, live or expired.
  const reservations = gw.raw(
    'SELECT id, request_id FROM credit_reservations WHERE account_id = ?',
    accountId,
  );
  for (const r of reservations) out.push(`hold ${String(r.id)} of request ${String(r.request_id)} is left`);
  const live = await gw.storage.listReservations(accountId, Date.now());
  if (live.length > 0) out.push(`${live.length} live holds listed`);

  // balance = credits − Σ charges; Σ record costs = Σ charges.
  const charged = charges.reduce((sum, e) => sum - e.amount, 0);
  const costs = records.reduce((sum, r) => sum + r.cost, 0);
  const otherEntries = ledger.filter(
    (e) => e.kind !== 'charge' && !(e.kind === 'credit' && e.amount === credit),
  );
  if (otherEntries.length > 0) out.push(`unexpected ledger entries: ${JSON.stringify(otherEntries)}`);
  const account = await gw.storage.getAccount(accountId);
  if (account?.balanceMicros !== credit - charged)
    out.push(`balance ${account?.balanceMicros} ≠ credit ${credit} − charges ${charged}`);
  if (costs !== charged) out.push(`Σ record cost ${costs} ≠ Σ charges ${charged}`);

  // What the client was shown as the cost is what its record says.
  for (const s of seen) {
    if (s.shownCost === null || s.requestId === null) continue;
    const record = recordById.get(s.requestId);
    if (record && record.cost !== s.shownCost)
      out.push(
        `step ${s.step}: shown cost ${s.shownCost} but record ${record.id} (${record.status}) costs ${record.cost}`,
      );
  }
  return out;
}

// ── The property ─────────────────────────────────────────────────────────────────────────────────

/**
 * The money invariant of the metered pipeline (pipeline/), as a property: fast-check generates
 * sequences of requests (chat JSON and streamed; Messages JSON and streamed — passed through to an
 * Anthropic route or translated —; Responses JSON and streamed, translated or native with a native
 * → translated failover; embeddings, images, rerank, and refusals), each
 * with a scripted end for every upstream attempt (success, 503/529/429 with or without Retry-After,
 * 500, 400, 401, a rejected fetch, a 2xx body that is not JSON, a break or a stall after k events)
 * and a client that reads, aborts or cancels at some point; run sequentially or all at once through
 * `gateway.fetch`. Whatever happened, storage must show one record per request, one settle per hold,
 * one charge per costed record, no hold left, and a balance of credit − charges.
 */
describe('the metered pipeline keeps the money straight whatever the upstream and the client do', () => {
  let gw: CountingGateway;
  let run = 0;

  beforeAll(async () => {
    gw = await startCountingGateway(config, scriptedUpstream);
  });
  afterAll(() => gw?.close());

  it('every request: one record, one settle per hold, one charge per cost, no hold left, balance = credit − charges', async () => {
    await fc.assert(
      fc.asyncProperty(sequenceArb, async (sequence) => {
        run++;
        const credit = CREDIT_MICROS[sequence.credit];
        const tenant = await createTenant(gw.storage, { creditMicros: credit });
        const tags = sequence.steps.map((_, i) => `tag-${run}-${i}`);
        const drive = (step: Step, i: number) => runStep(gw, tenant.inferenceKey, step, i, tags[i]!);
        const seen: Seen[] = [];
        if (sequence.concurrent) seen.push(...(await Promise.all(sequence.steps.map(drive))));
        else for (const [i, step] of sequence.steps.entries()) seen.push(await drive(step, i));
        await waitForSettles(gw, tenant.account.id, sequence.steps.length);
        for (const tag of tags) scripts.delete(tag);

        const violations = await violationsOf(gw, tenant.account.id, credit, sequence.steps.length, seen);
        expect(unscripted).toEqual([]);
        expect(violations, `client saw: ${JSON.stringify(seen)}`).toEqual([]);
      }),
      { numRuns: NUM_RUNS },
    );
  }, 120_000);
});
