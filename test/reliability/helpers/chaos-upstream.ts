import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoopbackServer } from '../../helpers/loopback-server.js';
import { fixtureWireBody, readFixture, sseEventsOf } from '../../helpers/wire-fixtures.js';
import { hashSeed, Prng } from './seed.js';

/**
 * What the chaos upstream may do with one upstream request:
 * - `ok`: answer at once (JSON, or SSE when the gateway asked for a stream);
 * - `slow_ok`: the same after a slow first byte (a bounded, seeded wait);
 * - `rate_limited`: 429 with `Retry-After: 0` or `1`;
 * - `server_error`: 500, 502 or 503;
 * - `reset`: the connection is destroyed before any byte of the answer;
 * - `break`: the answer starts and the connection is cut part-way (mid-stream for SSE);
 * - `bad_request`: 400 whose message quotes the request (as real providers do);
 * - `garbage`: a 200 that is not a completion;
 * - `unauthorized`: 401, as a provider answers a key it does not accept.
 */
export type ChaosOutcome =
  | 'ok'
  | 'slow_ok'
  | 'rate_limited'
  | 'server_error'
  | 'reset'
  | 'break'
  | 'bad_request'
  | 'garbage'
  | 'unauthorized';

/** Directives a request can carry in its pass-through field `x_chaos` (the gateway forwards unknown fields). */
export interface ChaosDirective {
  /** Groups the attempts of one client request (retries and failovers count up from 1). */
  id?: string;
  /**
   * Skip the dice: always this outcome; or `hold` (answer only when released, nothing if the client
   * left first); or `hold_midstream` (a stream whose first events go out at once, the rest when released).
   */
  force?: ChaosOutcome | 'hold' | 'hold_midstream';
  /** With `force: 'break'` on a stream: cut after this many events (default: seeded). */
  breakAfter?: number;
}

/** The default mix under load: about half the attempts fail in one way or another. */
export const DEFAULT_CHAOS_WEIGHTS: Record<ChaosOutcome, number> = {
  ok: 34,
  slow_ok: 14,
  rate_limited: 11,
  server_error: 13,
  reset: 9,
  break: 14,
  bad_request: 0,
  garbage: 5,
  unauthorized: 0,
};

/** Completion content for answers built in the recorded wire shape (instead of replaying the recordings). */
export interface ChaosReplyContent {
  text: string;
  /** When set, the answer also calls a tool with these arguments. */
  toolArgs?: string;
  usage: { prompt: number; completion: number; cached?: number };
}

export interface ChaosUpstreamOptions {
  seed: number;
  weights?: Partial<Record<ChaosOutcome, number>>;
  /** Bounds of the slow first byte, ms (default 50–300). */
  slowMs?: [number, number];
  /**
   * The content of an OK answer for this request body; `null`/absent replays the recorded wire
   * bodies (`openai-chat-completion-cached-tokens.recorded.json`, and a cut of
   * `openai-chat-stream-text-include-usage.chunks.txt`).
   */
  content?: (body: Record<string, unknown>) => ChaosReplyContent | null;
  /** The message of a 4xx/5xx body for this request (default: a fixed text). */
  errorMessage?: (body: Record<string, unknown>, status: number) => string;
}

/** One upstream request as the chaos upstream saw and answered it. */
export interface ChaosCall {
  marker: string | null;
  attempt: number;
  path: string;
  stream: boolean;
  outcome: ChaosOutcome | 'hold' | 'hold_midstream';
  /** The raw request body (to prove what travelled). */
  rawBody: string;
  /** The `Authorization` header it came with (which key paid). */
  authorization: string | null;
}

const RECORDED_STREAM = sseEventsOf(fixtureWireBody('openai-chat-stream-text-include-usage.chunks.txt'));
/** Role chunk, 12 content chunks, the finish chunk, the usage chunk and `[DONE]`, byte for byte. */
const STREAM_EVENTS = [...RECORDED_STREAM.slice(0, 13), ...RECORDED_STREAM.slice(RECORDED_STREAM.length - 3)];
const RECORDED_COMPLETION = JSON.parse(readFixture('openai-chat-completion-cached-tokens.recorded.json'))
  .attempts[1].rawResponseBody as Record<string, unknown>;

/**
 * A loopback OpenAI-format provider that misbehaves on purpose. Each upstream request's fate is
 * picked from a seeded PRNG keyed by (seed, the request's `x_chaos.id`, attempt number), so the
 * picks do not depend on the order in which concurrent requests arrive. Every call is recorded.
 */
export class ChaosUpstream {
  readonly calls: ChaosCall[] = [];
  /** How many of each outcome were served. */
  readonly tally: Record<string, number> = {};
  url = '';
  private readonly loopback = new LoopbackServer();
  private readonly attempts = new Map<string, number>();
  private readonly held = new Set<() => void>();
  private readonly waiters = new Set<() => void>();
  private anonymous = 0;

  constructor(private readonly options: ChaosUpstreamOptions) {}

  async start(): Promise<this> {
    this.url = await this.loopback.listen(
      (req, res) => void this.handle(req, res),
      (server) => {
        server.keepAliveTimeout = 5_000;
      },
    );
    return this;
  }

  async stop(): Promise<void> {
    this.releaseAll();
    await this.loopback.close();
  }

  /** Lets every held answer go out. */
  releaseAll(): void {
    for (const go of [...this.held]) go();
  }

  /** How many upstream calls carried this marker. */
  callsFor(marker: string): number {
    return this.calls.filter((c) => c.marker === marker).length;
  }

  /** Resolves once `test()` holds (checked after every call), or rejects after `timeoutMs`. */
  async waitUntil(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!test()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`chaos upstream: timed out after ${timeoutMs} ms waiting for ${what}`);
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 100));
        this.waiters.add(wake);
      });
    }
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let rawBody = '';
    try {
      for await (const chunk of req) rawBody += chunk;
    } catch {
      return;
    }
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(rawBody) as Record<string, unknown>;
    } catch {}
    const directive = (
      typeof body.x_chaos === 'object' && body.x_chaos !== null ? body.x_chaos : {}
    ) as ChaosDirective;
    const marker = typeof directive.id === 'string' ? directive.id : null;
    const key = marker ?? `anonymous-${this.anonymous++}`;
    const attempt = (this.attempts.get(key) ?? 0) + 1;
    this.attempts.set(key, attempt);
    const dice = new Prng(hashSeed(this.options.seed, key, attempt));
    const outcome = directive.force ?? dice.weighted(this.options.weights ?? DEFAULT_CHAOS_WEIGHTS);
    const stream = body.stream === true;
    const authorization = req.headers.authorization ?? null;
    this.calls.push({ marker, attempt, path: req.url ?? '/', stream, outcome, rawBody, authorization });
    this.tally[outcome] = (this.tally[outcome] ?? 0) + 1;
    this.notify();
    try {
      await this.answer(outcome, directive, dice, body, stream, req, res);
    } catch {
      req.socket.destroy();
    }
  }

  private async answer(
    outcome: ChaosOutcome | 'hold' | 'hold_midstream',
    directive: ChaosDirective,
    dice: Prng,
    body: Record<string, unknown>,
    stream: boolean,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    const [slowLo, slowHi] = this.options.slowMs ?? [50, 300];
    const message = (status: number) => this.options.errorMessage?.(body, status) ?? `chaos says ${status}`;
    switch (outcome) {
      case 'ok':
        return this.ok(body, stream, res);
      case 'slow_ok':
        await sleep(dice.int(slowLo, slowHi));
        if (res.destroyed) return;
        return this.ok(body, stream, res);
      case 'hold_midstream': {
        if (!stream) return this.answer('hold', directive, dice, body, stream, req, res);
        const events = this.streamEvents(body);
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        for (const event of events.slice(0, 3)) res.write(event);
        if (!(await this.heldUntilReleased(res))) return;
        for (const event of events.slice(3)) res.write(event);
        res.end();
        return;
      }
      case 'hold': {
        if (!(await this.heldUntilReleased(res)) || res.destroyed) return;
        return this.ok(body, stream, res);
      }
      case 'rate_limited':
        return errorReply(res, 429, message(429), 'rate_limit_exceeded', {
          'retry-after': dice.chance(0.5) ? '0' : '1',
        });
      case 'server_error': {
        const status = dice.pick([500, 502, 503]);
        return errorReply(res, status, message(status), null);
      }
      case 'bad_request':
        return errorReply(res, 400, message(400), 'invalid_request_error');
      case 'unauthorized':
        return errorReply(res, 401, 'Incorrect API key provided.', 'invalid_api_key');
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`<html>${message(200)}</html>`);
        return;
      case 'reset':
        req.socket.destroy();
        return;
      case 'break': {
        if (stream) {
          const events = this.streamEvents(body);
          const cutAt = directive.breakAfter ?? dice.int(0, events.length - 2);
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          for (const event of events.slice(0, cutAt)) res.write(event);
          await cut(res, req);
          return;
        }
        const json = JSON.stringify(this.completion(body));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(json.length) });
        res.write(json.slice(0, Math.floor(json.length / 2)));
        await cut(res, req);
        return;
      }
    }
  }

  /** Resolves true when released, false when the client left first. */
  private heldUntilReleased(res: ServerResponse): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const go = () => {
        this.held.delete(go);
        resolve(true);
      };
      this.held.add(go);
      res.once('close', () => {
        this.held.delete(go);
        resolve(false);
      });
    });
  }

  private ok(body: Record<string, unknown>, stream: boolean, res: ServerResponse): void {
    if (stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const event of this.streamEvents(body)) res.write(event);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(this.completion(body)));
  }

  private completion(body: Record<string, unknown>): Record<string, unknown> {
    const content = this.options.content?.(body) ?? null;
    return content
      ? completionInRecordedShape(content, choicesAsked(body))
      : structuredClone(RECORDED_COMPLETION);
  }

  private streamEvents(body: Record<string, unknown>): string[] {
    const content = this.options.content?.(body) ?? null;
    return content ? streamInRecordedShape(content, choicesAsked(body)) : STREAM_EVENTS;
  }
}

/**
 * How many choices an OpenAI upstream generates for this body: its `n` when that is a whole number
 * from 1 to 128 (what the gateway lets through), else 1. Answers built from `content` carry that
 * many choices; the usage is whatever `content` says (a test that wants the worst case reports
 * `n × max_tokens` completion tokens).
 */
export function choicesAsked(body: Record<string, unknown>): number {
  const n = body.n;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 128 ? n : 1;
}

function errorReply(
  res: ServerResponse,
  status: number,
  message: string,
  code: string | null,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ error: { message, type: 'server_error', param: null, code } }));
}

/** Cuts the connection once what was written has left, so the bytes before the cut really arrive. */
async function cut(res: ServerResponse, req: IncomingMessage): Promise<void> {
  await new Promise<void>((resolve) => res.write('', () => resolve()));
  await sleep(15);
  req.socket.destroy();
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const CREATED = 1_770_933_892;
const MODEL = 'gpt-4.1-nano-2025-04-14';

/** A non-streaming completion with the recorded body's fields, carrying `content` in each of `choices` choices. */
export function completionInRecordedShape(content: ChaosReplyContent, choices = 1): Record<string, unknown> {
  const toolCalls = content.toolArgs
    ? [{ id: 'call_chaos_1', type: 'function', function: { name: 'lookup', arguments: content.toolArgs } }]
    : undefined;
  return {
    id: 'chatcmpl-chaos',
    object: 'chat.completion',
    created: CREATED,
    model: MODEL,
    choices: Array.from({ length: choices }, (_, index) => ({
      index,
      message: {
        role: 'assistant',
        content: content.text,
        refusal: null,
        annotations: [],
        ...(toolCalls && { tool_calls: toolCalls }),
      },
      logprobs: null,
      finish_reason: toolCalls ? 'tool_calls' : 'stop',
    })),
    usage: usageObject(content.usage),
    service_tier: 'default',
    system_fingerprint: 'fp_810e56f10f',
  };
}

/**
 * A stream in the recorded chunk shape (role, content pieces, tool call, finish; once per choice,
 * choice after choice), then usage and `[DONE]`.
 */
export function streamInRecordedShape(content: ChaosReplyContent, choices = 1): string[] {
  const events: string[] = [];
  for (let index = 0; index < choices; index++) events.push(...choiceEvents(content, index));
  events.push(
    `data: ${JSON.stringify({
      id: 'chatcmpl-chaos',
      object: 'chat.completion.chunk',
      created: CREATED,
      model: MODEL,
      service_tier: 'default',
      system_fingerprint: 'fp_de604bd877',
      choices: [],
      usage: usageObject(content.usage),
      obfuscation: 'chaos',
    })}\n\n`,
  );
  events.push('data: [DONE]\n\n');
  return events;
}

/** The chunks of one choice of a stream: role, content pieces, tool call, finish. */
function choiceEvents(content: ChaosReplyContent, index: number): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-chaos',
      object: 'chat.completion.chunk',
      created: CREATED,
      model: MODEL,
      service_tier: 'default',
      system_fingerprint: 'fp_de604bd877',
      choices: [{ index, delta, logprobs: null, finish_reason: finish }],
      usage: null,
      obfuscation: 'chaos',
    })}\n\n`;
  const pieces = content.text.match(/.{1,12}/gs) ?? [];
  const events = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const piece of pieces) events.push(chunk({ content: piece }));
  if (content.toolArgs) {
    events.push(
      chunk({
        tool_calls: [
          { index: 0, id: 'call_chaos_1', type: 'function', function: { name: 'lookup', arguments: '' } },
        ],
      }),
    );
    for (const piece of content.toolArgs.match(/.{1,10}/gs) ?? []) {
      events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }));
    }
  }
  events.push(chunk({}, content.toolArgs ? 'tool_calls' : 'stop'));
  return events;
}

function usageObject(usage: ChaosReplyContent['usage']) {
  return {
    prompt_tokens: usage.prompt,
    completion_tokens: usage.completion,
    total_tokens: usage.prompt + usage.completion,
    prompt_tokens_details: { cached_tokens: usage.cached ?? 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}
