import {
  fetchHttpClient,
  type HttpRequestInit,
  type HttpResponse,
  type ProviderFormat,
  scriptedHttpResponse,
  type WalkClock,
} from '@tollgate/core';
import { type StreamEvent, sseBlocks } from './sse-events.js';

/** One request a fake upstream received. */
export interface UpstreamCall {
  method: string;
  url: string;
  /** The request headers, names as the gateway sent them. */
  headers: Record<string, string>;
  /** The JSON body parsed; the raw text when it is not JSON; `undefined` without a body. */
  body: unknown;
}

/** How a scripted call fails before any answer. */
export type UpstreamFailure = 'timeout' | 'reset';

export interface StreamOptions {
  /** Time (on the test's clock) between two events; the gateway's idle timeouts see it. */
  delayMs?: number;
  /** OpenAI-style streams end with `data: [DONE]` unless this is false (or `stall` is set). */
  done?: boolean;
  /**
   * After the events the stream goes silent and stays open until the gateway gives up on it (its
   * `stream_idle_timeout_ms`, the deadline, or the caller leaving); meanwhile the test clock runs
   * ten times faster than real time, so the gateway's timers fall due.
   */
  stall?: boolean;
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
}

type Answer = (
  call: UpstreamCall,
  signal: AbortSignal | undefined,
  init: HttpRequestInit,
) => Promise<HttpResponse>;

/** Thrown (and reported by the test gateway) when a fake upstream has no answer for a request. */
export class UnansweredUpstreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnansweredUpstreamError';
  }
}

const encoder = new TextEncoder();
/** How far a scripted timeout moves the clock per step while it waits for the gateway to give up. */
const TIMEOUT_STEP_MS = 100;
/** A scripted timeout waits at most this long (test time) for the gateway's own deadline. */
const TIMEOUT_LIMIT_MS = 60 * 60 * 1000;

/**
 * A provider's scripted stand-in: each `reply` / `stream` / `fail` queues one answer, used first
 * in, first out; `always` sets what answers once the queue is empty. A request with neither fails
 * the test (see `createTestGateway`), it never hangs.
 */
export class FakeUpstream {
  /** Every request received, in order. */
  readonly calls: UpstreamCall[] = [];
  private readonly queue: Answer[] = [];
  private fallback: ((upstream: FakeUpstream, call: UpstreamCall) => void) | null = null;
  private held: PromiseLike<unknown> | null = null;

  constructor(
    /** The provider's name in the config. */
    readonly name: string,
    readonly format: ProviderFormat,
    /** The gateway's clock; one with `advance` (a `FakeClock`) is moved, any other is waited on. */
    private readonly clock: WalkClock & { advance?(ms: number): void },
  ) {}

  /**
   * Answers one request with `status` and `json` (an object is serialized; a string is sent as is),
   * or with a Web `Response` as it stands (its status, headers, and its body read as it streams).
   */
  reply(status: number, json: unknown, headers?: Record<string, string>): this;
  reply(response: Response): this;
  reply(statusOrResponse: number | Response, json?: unknown, headers: Record<string, string> = {}): this {
    if (statusOrResponse instanceof Response) {
      const response = statusOrResponse;
      // Read as the gateway reads a network answer: its body arrives chunk by chunk as it is pulled.
      this.queue.push((call, _signal, init) => fetchHttpClient(async () => response).request(call.url, init));
      return this;
    }
    const status = statusOrResponse;
    const text = typeof json === 'string' ? json : JSON.stringify(json);
    const allHeaders = { 'content-type': 'application/json', ...headers };
    this.queue.push(async () =>
      scriptedHttpResponse({ status, headers: allHeaders, pieces: [encoder.encode(text)] }),
    );
    return this;
  }

  /** Answers one request with a server-sent event stream in the provider's own wire format. */
  stream(events: readonly StreamEvent[], options: StreamOptions = {}): this {
    const pieces = sseBlocks(this.format, events, !options.stall && (options.done ?? true));
    const { delayMs } = options;
    const between = delayMs
      ? async () => {
          // Lets the gateway read what came so far before the clock moves on.
          await new Promise((resolve) => setTimeout(resolve, this.clock.advance ? 0 : delayMs));
          this.clock.advance?.(delayMs);
        }
      : undefined;
    const headers = { 'content-type': 'text/event-stream', ...options.headers };
    this.queue.push(async (_call, signal) => {
      let released = false;
      const response = scriptedHttpResponse(
        { status: options.status ?? 200, headers, pieces, ...(between && { between }) },
        () => {
          released = true;
        },
      );
      if (!options.stall) return response;
      const stall = () => this.stallUntilAborted(signal, () => released);
      return {
        ...response,
        async *body() {
          yield* response.body();
          await stall();
        },
        text: async () => {
          await response.text();
          return stall();
        },
      };
    });
    return this;
  }

  /**
   * Fails one request: `timeout` never answers, and moves the test clock until the gateway's own
   * deadline (the provider's `timeout_ms`, else the routing deadline) gives up on it; `reset` drops
   * the connection at once.
   */
  fail(kind: UpstreamFailure): this {
    this.queue.push(async (_call, signal) => {
      if (kind === 'reset') {
        const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
        throw new TypeError('fetch failed', { cause: reset });
      }
      return this.timeOut(signal);
    });
    return this;
  }

  /**
   * What answers when the queue is empty: the arguments of `reply`, or a function that queues one
   * answer each time it is needed, given the request, e.g. `always((u, call) => u.stream(events))`.
   */
  always(status: number, json: unknown, headers?: Record<string, string>): this;
  always(script: (upstream: FakeUpstream, call: UpstreamCall) => void): this;
  always(
    statusOrScript: number | ((upstream: FakeUpstream, call: UpstreamCall) => void),
    json?: unknown,
    headers?: Record<string, string>,
  ): this {
    this.fallback =
      typeof statusOrScript === 'function' ? statusOrScript : (u) => u.reply(statusOrScript, json, headers);
    return this;
  }

  /**
   * What answers when the queue is empty: a `fetch` function of the test's, called as the gateway
   * would call the network (`url`, then `method`, `headers`, `body` and the gateway's `signal`); it
   * may stream, throw or watch the signal as a real upstream would.
   */
  handle(fetchImpl: typeof fetch): this {
    const http = fetchHttpClient(fetchImpl);
    this.fallback = (upstream) => {
      upstream.queue.push((call, _signal, init) => http.request(call.url, init));
    };
    return this;
  }

  /**
   * Until `release` settles, every request this fake receives waits before its answer: a barrier
   * the test opens (to keep admitted requests in flight while others are refused, say). `null`
   * lifts it.
   */
  holdUntil(release: PromiseLike<unknown> | null): this {
    this.held = release;
    return this;
  }

  /** Answers queued and not used yet. */
  get pending(): number {
    return this.queue.length;
  }

  /** Records the call and plays the next answer (used by the test gateway's HTTP client). */
  async answer(url: string, init: HttpRequestInit): Promise<HttpResponse> {
    const call: UpstreamCall = {
      method: init.method,
      url,
      headers: { ...init.headers },
      body: parseBody(init.body),
    };
    this.calls.push(call);
    if (this.queue.length === 0) this.fallback?.(this, call);
    const next = this.queue.shift();
    if (!next) {
      throw new UnansweredUpstreamError(
        `@tollgate/testing: the fake upstream "${this.name}" has no answer for ${init.method} ${pathOf(url)} ` +
          `(queue one with upstream("${this.name}").reply(...), .stream(...) or .fail(...), or set .always(...))`,
      );
    }
    if (this.held) await this.held;
    return next(call, init.signal, init);
  }

  /**
   * Runs the clock (100 ms per 10 ms of real time) until `signal` aborts, then throws its reason;
   * stops too once the gateway has released the body.
   */
  private async stallUntilAborted(signal: AbortSignal | undefined, released: () => boolean): Promise<never> {
    for (let waited = 0; waited < TIMEOUT_LIMIT_MS; waited += TIMEOUT_STEP_MS) {
      if (signal?.aborted) throw signal.reason;
      if (released()) throw new Error('released');
      await new Promise((resolve) => setTimeout(resolve, 10));
      this.clock.advance?.(TIMEOUT_STEP_MS);
    }
    throw new UnansweredUpstreamError(
      `@tollgate/testing: "${this.name}" stalled and the gateway never gave up`,
    );
  }

  private timeOut(signal: AbortSignal | undefined): Promise<never> {
    return new Promise((_resolve, reject) => {
      if (!signal) {
        reject(
          new UnansweredUpstreamError(
            `@tollgate/testing: "${this.name}" timed out with no deadline to end it`,
          ),
        );
        return;
      }
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      // A clock of real time: the gateway's own timer ends the wait.
      const { advance } = this.clock;
      if (!advance) return;
      for (let waited = 0; !signal.aborted && waited < TIMEOUT_LIMIT_MS; waited += TIMEOUT_STEP_MS) {
        advance.call(this.clock, TIMEOUT_STEP_MS);
      }
      if (!signal.aborted) {
        reject(
          new UnansweredUpstreamError(
            `@tollgate/testing: "${this.name}" timed out and the gateway never gave up`,
          ),
        );
      }
    });
  }
}

function parseBody(body: string | undefined): unknown {
  if (body === undefined) return undefined;
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** The path (and query) of a URL, for messages. */
export function pathOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname + parsed.search;
  } catch {
    return url;
  }
}
