import type {
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';

/**
 * Bounded load and a client that remembers what it was told: every response's request id, status,
 * error code, and the cost the gateway showed (header, body or terminal stream chunk).
 */

/** Runs `task(0..count-1)` with at most `concurrency` at once; starts nothing after `budgetMs`. */
export async function runBounded<T>(
  count: number,
  concurrency: number,
  budgetMs: number,
  task: (index: number) => Promise<T>,
): Promise<{ results: (T | undefined)[]; started: number; skipped: number }> {
  const results: (T | undefined)[] = new Array(count).fill(undefined);
  const deadline = Date.now() + budgetMs;
  let next = 0;
  let started = 0;
  const worker = async () => {
    for (;;) {
      const index = next++;
      if (index >= count || Date.now() > deadline) return;
      started++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { results, started, skipped: count - started };
}

/** What one chat request came back with. */
export interface ChatOutcome {
  /** HTTP status, or null when no response arrived (transport failure, or we aborted first). */
  status: number | null;
  requestId: string | null;
  /** `json` answer, `sse` stream read to its end, `aborted` (we hung up), `transport` (no response). */
  kind: 'json' | 'sse' | 'aborted' | 'transport';
  errorCode: string | null;
  /** The cost the gateway showed, in micros (body `gateway.cost_micros`, or the terminal chunk's). */
  shownCostMicros: number | null;
  /** The `X-Gateway-Cost-Usd` header of a non-streaming answer. */
  costHeaderUsd: string | null;
  replay: boolean;
  /** Streams: an `event: error` arrived; the terminal chunk's finish_reason; `[DONE]` seen. */
  sawErrorEvent: boolean;
  finishReason: string | null;
  done: boolean;
  /** The assistant text received (content deltas, or the message content). */
  text: string;
  /** The parsed JSON body of a JSON answer. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes.
  body?: any;
  transportError?: string;
}

/** An outcome before any response arrived: a transport failure until the response says otherwise. */
function noOutcomeYet(): ChatOutcome {
  return {
    status: null,
    requestId: null,
    kind: 'transport',
    errorCode: null,
    shownCostMicros: null,
    costHeaderUsd: null,
    replay: false,
    sawErrorEvent: false,
    finishReason: null,
    done: false,
    text: '',
  };
}

export interface SendOptions {
  headers?: Record<string, string>;
  /** Streams: hang up right after the first content chunk arrived. */
  abortAfterFirstChunk?: boolean;
  /** Called once the first content chunk of a stream arrived. */
  onFirstContent?: () => void;
  /** Hang up when this resolves (before or during the answer). */
  abortWhen?: Promise<unknown>;
  /** Upper bound of the whole exchange (default 60 s). */
  timeoutMs?: number;
}

/** POST /v1/chat/completions with fetch, reading a JSON answer or an SSE stream to its end. */
export async function sendChat(
  baseUrl: string,
  key: string,
  body: unknown,
  options: SendOptions = {},
): Promise<ChatOutcome> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('client timeout')), options.timeoutMs ?? 60_000);
  let aborted = false;
  options.abortWhen?.then(() => {
    aborted = true;
    controller.abort(new Error('client hung up'));
  });
  const outcome = noOutcomeYet();
  try {
    const response = await fetch(`${baseUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...options.headers },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    outcome.status = response.status;
    outcome.requestId = response.headers.get('x-gateway-request-id');
    outcome.replay = response.headers.get('x-gateway-idempotent-replay') === 'true';
    outcome.costHeaderUsd = response.headers.get('x-gateway-cost-usd');
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      outcome.kind = 'sse';
      const hungUp = await readStream(response, outcome, controller.signal, () => {
        options.onFirstContent?.();
        return options.abortAfterFirstChunk === true;
      });
      if (hungUp) {
        aborted = true;
        controller.abort(new Error('client hung up mid-stream'));
      }
      if (aborted) outcome.kind = 'aborted';
      else if (controller.signal.aborted) {
        outcome.kind = 'transport';
        outcome.transportError = String(controller.signal.reason);
      }
    } else {
      const text = await response.text();
      outcome.kind = 'json';
      try {
        outcome.body = JSON.parse(text);
      } catch {
        outcome.body = undefined;
      }
      outcome.errorCode = outcome.body?.error?.code ?? null;
      const cost = outcome.body?.gateway?.cost_micros;
      if (typeof cost === 'number') outcome.shownCostMicros = cost;
      const content = outcome.body?.choices?.[0]?.message?.content;
      if (typeof content === 'string') outcome.text = content;
    }
  } catch (error) {
    if (aborted) outcome.kind = 'aborted';
    else {
      outcome.kind = 'transport';
      outcome.transportError = (error as Error)?.message ?? String(error);
    }
  } finally {
    clearTimeout(timer);
  }
  return outcome;
}

/**
 * Reads SSE events; calls `onFirstContent` after the first content chunk, and hangs up (cancels the
 * body, which closes the connection) when it returns true. Resolves whether it hung up.
 *
 * Hanging up by cancelling the reader rather than by aborting the fetch: an abort while a piped
 * body is being read can leave the pending `read()` unsettled on Node 20 (seen here), which would
 * hang the client forever.
 */
async function readStream(
  response: Response,
  outcome: ChatOutcome,
  signal: AbortSignal,
  onFirstContent: () => boolean,
): Promise<boolean> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  // Any abort (time limit, `abortWhen`) also cancels the reader, so a pending read always settles.
  signal.addEventListener('abort', () => reader.cancel(signal.reason).catch(() => {}), { once: true });
  let buffer = '';
  let sawContent = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += value;
    let cut = buffer.indexOf('\n\n');
    while (cut >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf('\n\n');
      let name = 'message';
      let data = '';
      for (const line of event.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data += line.slice(5).trimStart();
      }
      if (name === 'error') {
        outcome.sawErrorEvent = true;
        continue;
      }
      if (data === '[DONE]') {
        outcome.done = true;
        continue;
      }
      // biome-ignore lint/suspicious/noExplicitAny: a chunk.
      let chunk: any;
      try {
        chunk = JSON.parse(data);
      } catch {
        continue;
      }
      if (chunk?.gateway) {
        outcome.shownCostMicros =
          typeof chunk.gateway.cost_micros === 'number' ? chunk.gateway.cost_micros : null;
        outcome.finishReason = chunk.choices?.[0]?.finish_reason ?? null;
        continue;
      }
      for (const choice of chunk?.choices ?? []) {
        const piece = choice?.delta?.content;
        if (typeof piece === 'string') outcome.text += piece;
        for (const call of choice?.delta?.tool_calls ?? []) {
          if (typeof call?.function?.arguments === 'string') outcome.text += call.function.arguments;
        }
      }
      if (!sawContent && outcome.text.length > 0) {
        sawContent = true;
        if (onFirstContent()) {
          await reader.cancel(new Error('client hung up mid-stream')).catch(() => {});
          return true;
        }
      }
    }
  }
  return false;
}

/** Counts of a list by a key, sorted, for printing. */
export function tallyBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const item of items) out[key(item)] = (out[key(item)] ?? 0) + 1;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Per-check wall times, printed once per file (informational only: nothing asserts on them). */
export class Timings {
  private readonly entries: [string, number][] = [];

  constructor(private readonly file: string) {}

  async time<T>(label: string, fn: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await fn();
    } finally {
      this.entries.push([label, performance.now() - started]);
    }
  }

  print(): void {
    const lines = this.entries.map(([label, ms]) => `  ${(ms / 1000).toFixed(2).padStart(7)} s  ${label}`);
    console.info(`[reliability] ${this.file} timings:\n${lines.join('\n')}`);
  }
}

/**
 * The same exchange through the official OpenAI SDK (`maxRetries: 0`): request id and cost from the
 * raw response; a failure's status, code and request id from the SDK's `APIError`.
 */
export async function sendChatWithSdk(
  client: import('openai').default,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<ChatOutcome> {
  const { APIError } = await import('openai');
  const outcome = noOutcomeYet();
  const noteResponse = (response: Response) => {
    outcome.status = response.status;
    outcome.requestId = response.headers.get('x-gateway-request-id');
    outcome.replay = response.headers.get('x-gateway-idempotent-replay') === 'true';
    outcome.costHeaderUsd = response.headers.get('x-gateway-cost-usd');
  };
  try {
    if (body.stream === true) {
      const { data, response } = await client.chat.completions
        .create({ ...body, stream: true } as unknown as ChatCompletionCreateParamsStreaming, { headers })
        .withResponse();
      noteResponse(response);
      outcome.kind = 'sse';
      try {
        for await (const chunk of data) {
          // biome-ignore lint/suspicious/noExplicitAny: the gateway's terminal chunk carries `gateway`.
          const gateway = (chunk as any).gateway;
          if (gateway) {
            outcome.shownCostMicros = typeof gateway.cost_micros === 'number' ? gateway.cost_micros : null;
            outcome.finishReason = chunk.choices[0]?.finish_reason ?? null;
            continue;
          }
          for (const choice of chunk.choices) outcome.text += choice.delta?.content ?? '';
        }
        outcome.done = true;
      } catch (error) {
        // The SDK turns the named `error` event into an APIError (no status): a broken stream.
        if (error instanceof APIError) outcome.sawErrorEvent = true;
        else throw error;
      }
      return outcome;
    }
    const { data, response } = await client.chat.completions
      .create(body as unknown as ChatCompletionCreateParamsNonStreaming, { headers })
      .withResponse();
    noteResponse(response);
    outcome.kind = 'json';
    outcome.body = data;
    // biome-ignore lint/suspicious/noExplicitAny: the gateway object is additive.
    const cost = (data as any).gateway?.cost_micros;
    if (typeof cost === 'number') outcome.shownCostMicros = cost;
    outcome.text = data.choices[0]?.message?.content ?? '';
  } catch (error) {
    if (error instanceof APIError && error.status !== undefined) {
      outcome.kind = 'json';
      outcome.status = error.status;
      outcome.requestId = error.headers?.get('x-gateway-request-id') ?? null;
      outcome.errorCode = typeof error.code === 'string' ? error.code : null;
    } else {
      outcome.kind = 'transport';
      outcome.transportError = (error as Error)?.message ?? String(error);
    }
  }
  return outcome;
}
