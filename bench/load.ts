import autocannon from 'autocannon';
import { describeFailure, FailureTally, quantile, sorted } from './stats.js';

/**
 * What a complete answer looks like: a chat completion, an SSE stream, an embeddings list, a
 * Messages answer, a Messages stream (which ends with `message_stop`), a Response, or a Responses
 * event stream.
 */
export type Answer =
  | 'completion'
  | 'stream'
  | 'embeddings'
  | 'message'
  | 'messages-stream'
  | 'response'
  | 'response-stream';

export interface LoadSpec {
  url: string;
  /** The request path, e.g. `/v1/chat/completions`. */
  path: string;
  connections: number;
  /** How long the clients send; with `answers`, the most the run may take. */
  durationS: number;
  /** Stop once this many requests were answered (the warm-up: see `warm-up.ts`). */
  answers?: number;
  headers: Record<string, string>;
  /**
   * Bearer keys to spread over the connections, one per connection in turn (its `authorization`
   * replaces the one in `headers`): several tenants instead of one.
   */
  keys?: readonly string[];
  body: string;
  answer: Answer;
}

const COMPLETE: Record<Answer, (body: string) => boolean> = {
  completion: (body) => body.startsWith('{') && body.includes('"choices"'),
  stream: (body) => body.endsWith('data: [DONE]\n\n') && !body.includes('event: error'),
  embeddings: (body) => body.startsWith('{') && body.includes('"embedding":['),
  message: (body) => body.startsWith('{') && body.includes('"type":"message"'),
  'messages-stream': (body) =>
    body.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n') && !body.includes('event: error'),
  response: (body) =>
    body.startsWith('{') && body.includes('"object":"response"') && body.includes('"status":"completed"'),
  'response-stream': (body) => body.includes('event: response.completed\n') && body.endsWith('\n\n'),
};

export interface LoadResult {
  /** 2xx responses whose body was complete (a JSON completion or embeddings list, or a stream ending in `[DONE]`). */
  ok: number;
  /** Everything that was not `ok`, by kind: status + error code, bad bodies, socket errors. */
  failures: FailureTally;
  /** Requests written but unanswered when the load generator stopped (it closes those sockets). */
  cutAtStop: number;
  elapsedS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

const MAX_SAMPLES = 2_000_000;

/**
 * One cell: `connections` keep-alive clients POST the body back to back for `durationS` seconds
 * (autocannon, in this process). Latencies are kept at full resolution (autocannon's own histogram
 * rounds to whole ms), every response is checked, and a watchdog stops a run that overstays.
 */
export function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const latencies = new Float64Array(MAX_SAMPLES);
  let samples = 0;
  let ok = 0;
  let responses = 0;
  const failures = new FailureTally();
  const complete = COMPLETE[spec.answer];
  const headers = { 'content-type': 'application/json', ...spec.headers };

  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        ...(spec.answers === undefined ? { duration: spec.durationS } : { amount: spec.answers }),
        pipelining: 1,
        timeout: 10,
        sampleInt: 100,
        ...(spec.keys?.length && { setupClient: keyPerConnection(spec.keys, headers) }),
        requests: [
          {
            method: 'POST',
            path: spec.path,
            headers,
            body: spec.body,
            onResponse(status, body) {
              responses++;
              if (status < 200 || status > 299) failures.add(describeFailure(status, body), body);
              else if (!complete(body)) failures.add(`${status} incomplete body`, body.slice(-240));
              else ok++;
            },
          },
        ],
      },
      (error, result) => {
        clearTimeout(watchdog);
        if (error) return reject(error);
        const elapsedS = (performance.now() - startedAt) / 1000;
        if (ok === 0)
          failures.add('no complete answer', `none of the requests completed within ${spec.durationS} s`);
        if (result.errors > 0)
          failures.add('socket error', `${result.errors} errors, ${result.timeouts} timeouts`);
        const ordered = sorted(latencies.subarray(0, samples));
        resolve({
          ok,
          failures,
          cutAtStop: Math.max(0, result.requests.sent - responses - result.errors),
          elapsedS,
          rps: ok / elapsedS,
          p50Ms: quantile(ordered, 0.5),
          p99Ms: quantile(ordered, 0.99),
        });
      },
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      if (status >= 200 && status <= 299 && samples < MAX_SAMPLES) latencies[samples++] = ms;
    });
    const limitS = spec.answers === undefined ? spec.durationS + 20 : spec.durationS;
    const watchdog = setTimeout(() => instance.stop(), limitS * 1000);
  });
}

/** autocannon's `setupClient`: each connection in turn gets the next key as its bearer token. */
function keyPerConnection(keys: readonly string[], headers: Record<string, string>) {
  let next = 0;
  return (client: { setHeaders(headers: Record<string, string>): void }) => {
    const key = keys[next++ % keys.length];
    client.setHeaders({ ...headers, authorization: `Bearer ${key}` });
  };
}
