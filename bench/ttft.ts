import { Agent, request } from 'undici';
import { describeFailure, FailureTally, quantile, sorted } from './stats.js';
import { PACED } from './wire.js';

/*
 * Streams seen from the client: time to the first content chunk (sequential, one connection), and
 * whether chunks are forwarded as they arrive (against an upstream that spaces its chunks out).
 */

const PATH = '/v1/chat/completions';

/** Reads an SSE body and calls `onContent(now)` for each `data:` event carrying non-empty content. */
async function readStream(
  body: AsyncIterable<Buffer>,
  onContent: (at: number) => void,
): Promise<{ done: boolean; text: string }> {
  const decoder = new TextDecoder();
  let buffered = '';
  let tail = '';
  for await (const piece of body) {
    const at = performance.now();
    buffered += decoder.decode(piece, { stream: true });
    let end = buffered.indexOf('\n\n');
    while (end !== -1) {
      const event = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      tail = event;
      if (event.startsWith('data: {') && hasContent(event.slice(6))) onContent(at);
      end = buffered.indexOf('\n\n');
    }
  }
  return { done: tail === 'data: [DONE]', text: tail };
}

function hasContent(json: string): boolean {
  if (!json.includes('"content":"')) return false;
  const chunk = JSON.parse(json) as { choices?: { delta?: { content?: unknown } }[] };
  return (
    chunk.choices?.some((c) => typeof c.delta?.content === 'string' && c.delta.content.length > 0) ?? false
  );
}

export interface TtftResult {
  n: number;
  p50Ms: number;
  p90Ms: number;
  failures: FailureTally;
  /** 2xx streams that were read to `[DONE]` (for the metering check). */
  ok: number;
}

/** Time to the first content chunk: `count` sequential streams (stops early at `deadlineMs`). */
export async function measureTtft(
  url: string,
  headers: Record<string, string>,
  body: string,
  count: number,
  deadlineMs: number,
): Promise<TtftResult> {
  const agent = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
  const times: number[] = [];
  const failures = new FailureTally();
  let ok = 0;
  const stopAt = performance.now() + deadlineMs;
  try {
    for (let i = 0; i < count && performance.now() < stopAt; i++) {
      const started = performance.now();
      let first = Number.NaN;
      try {
        const res = await request(`${url}${PATH}`, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
        });
        if (res.statusCode !== 200) {
          const text = await res.body.text();
          failures.add(describeFailure(res.statusCode, text), text);
          continue;
        }
        const read = await readStream(res.body, (at) => {
          if (Number.isNaN(first)) first = at;
        });
        if (!read.done || Number.isNaN(first)) failures.add('200 incomplete stream', read.text);
        else {
          ok++;
          times.push(first - started);
        }
      } catch (error) {
        failures.add('request error', (error as Error).message);
      }
    }
  } finally {
    await agent.close();
  }
  const ordered = sorted(times);
  return { n: times.length, p50Ms: quantile(ordered, 0.5), p90Ms: quantile(ordered, 0.9), failures, ok };
}

export interface ForwardingResult {
  /** Each content chunk reached the client on its own, spaced like the upstream sent it. */
  asTheyArrive: boolean;
  /** Time between the first and the last content chunk at the client, per stream (median). */
  spreadMs: number;
  /** What the upstream's spacing alone makes that spread. */
  upstreamSpreadMs: number;
  ok: number;
  failures: FailureTally;
}

/**
 * Streams `model` (a `*paced*` model: the mock spaces its chunks `PACED.gapMs` apart) `count` times.
 * Forwarded as they arrive means the content chunks still reach the client spread out, not in a burst.
 */
export async function checkForwarding(
  url: string,
  headers: Record<string, string>,
  body: string,
  count = 3,
): Promise<ForwardingResult> {
  const upstreamSpreadMs = (PACED.contentChunks - 1) * PACED.gapMs;
  const spreads: number[] = [];
  const failures = new FailureTally();
  const agent = new Agent({ connections: 1 });
  try {
    for (let i = 0; i < count; i++) {
      const arrivals: number[] = [];
      try {
        const res = await request(`${url}${PATH}`, {
          dispatcher: agent,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body,
          headersTimeout: 10_000,
          bodyTimeout: 10_000,
        });
        if (res.statusCode !== 200) {
          const text = await res.body.text();
          failures.add(describeFailure(res.statusCode, text), text);
          continue;
        }
        const read = await readStream(res.body, (at) => arrivals.push(at));
        if (!read.done || arrivals.length !== PACED.contentChunks)
          failures.add('200 incomplete stream', read.text);
        else spreads.push((arrivals.at(-1) as number) - (arrivals[0] as number));
      } catch (error) {
        failures.add('request error', (error as Error).message);
      }
    }
  } finally {
    await agent.close();
  }
  const spreadMs = quantile(sorted(spreads), 0.5);
  return {
    asTheyArrive: spreads.length > 0 && spreadMs >= 0.7 * upstreamSpreadMs,
    spreadMs,
    upstreamSpreadMs,
    ok: spreads.length,
    failures,
  };
}
