import { describe, expect, it } from 'vitest';
import type { CatalogueEndpoint, CatalogueModel } from '../catalogue/catalogue.js';
import { GatewayError } from '../errors/gateway-error.js';
import { UpstreamError } from '../providers/upstream-error.js';
import { FakeClock } from './fake-clock.js';
import {
  type AttemptControl,
  type PlannedRoute,
  RoutingFailed,
  WalkAbandoned,
  walkRoutes,
} from './walk-routes.js';

function route(provider: string, timeoutMs: number | null = null, modelId = 'vendor/model'): PlannedRoute {
  const endpoint = {
    provider: {
      id: provider,
      format: 'openai',
      baseUrl: 'http://x',
      apiKey: 'k',
      headers: {},
      timeoutMs,
      streamIdleTimeoutMs: 60_000,
    },
    upstreamModel: 'm',
    pricing: { prompt: 1, completion: 1, cachedPrompt: null, cacheWrite: null, image: 0, search: 0 },
    usable: true,
  } satisfies CatalogueEndpoint;
  const model = {
    id: modelId,
    name: modelId,
    type: 'chat',
    contextLength: null,
    maxOutputTokens: 100,
    imageInputTokens: 3000,
    capabilities: { tools: false },
    endpoints: [endpoint],
  } satisfies CatalogueModel;
  return { model, endpoint };
}

const http = (status: number, retryAfterMs: number | null = null) =>
  new UpstreamError('http', `status ${status}`, status, retryAfterMs);
const network = () => new UpstreamError('network', 'socket hang up');

/** Answers each attempt from a script: an error to throw, or 'ok'. */
/** `{ hang: ms }` holds the attempt open while the clock moves `ms` forward. */
function scripted(script: (UpstreamError | 'ok' | { hang: number })[], clock: FakeClock) {
  const calls: string[] = [];
  const attempt = async (r: PlannedRoute, { signal }: AttemptControl) => {
    calls.push(r.endpoint.provider.id);
    const step = script.shift();
    if (step === undefined) throw new Error('script exhausted');
    if (step === 'ok') return `served by ${r.endpoint.provider.id}`;
    if ('hang' in step) {
      return new Promise<string>((_resolve, reject) => {
        signal.addEventListener('abort', () => reject(signal.reason));
        clock.advance(step.hang);
      });
    }
    throw step;
  };
  return { attempt, calls };
}

function options(
  clock: FakeClock,
  overrides: Partial<{ attemptsPerRoute: number; deadlineMs: number; signal: AbortSignal }> = {},
) {
  return {
    attemptsPerRoute: overrides.attemptsPerRoute ?? 3,
    deadlineAt: clock.now() + (overrides.deadlineMs ?? 60_000),
    signal: overrides.signal ?? new AbortController().signal,
    clock,
  };
}

async function failure(promise: Promise<unknown>): Promise<RoutingFailed> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RoutingFailed) return error;
    throw error;
  }
  throw new Error('expected RoutingFailed');
}

describe('walkRoutes', () => {
  it('rule 1: tries each route with its own attempts before moving to the next', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = scripted([http(503), http(503), http(503), 'ok'], clock);
    const outcome = await walkRoutes([route('a'), route('b')], attempt, options(clock));
    expect(calls).toEqual(['a', 'a', 'a', 'b']);
    expect(outcome.value).toBe('served by b');
    expect(outcome.attempts).toBe(4);
    expect(outcome.failures).toEqual([
      { provider: 'a', status: 503, reason: 'http_503' },
      { provider: 'a', status: 503, reason: 'http_503 (try 2)' },
      { provider: 'a', status: 503, reason: 'http_503 (try 3)' },
    ]);
  });

  it.each([408, 425, 429, 500, 502, 503, 504, 529])(
    'rule 2: retries upstream %d on the same route (529: Anthropic overloaded)',
    async (status) => {
      const clock = new FakeClock();
      const { attempt, calls } = scripted([http(status), 'ok'], clock);
      const outcome = await walkRoutes([route('a'), route('b')], attempt, options(clock));
      expect(calls).toEqual(['a', 'a']);
      expect(outcome.failures).toEqual([{ provider: 'a', status, reason: `http_${status}` }]);
    },
  );

  it.each([501, 505])('rule 3: does not retry %d but fails over', async (status) => {
    const clock = new FakeClock();
    const { attempt, calls } = scripted([http(status), 'ok'], clock);
    const outcome = await walkRoutes([route('a'), route('b')], attempt, options(clock));
    expect(calls).toEqual(['a', 'b']);
    expect(outcome.attempts).toBe(2);
  });

  it.each([400, 401, 403, 404, 413, 422])(
    'rule 4: returns any other 4xx (%d) at once as 400, no retry, no failover',
    async (status) => {
      const clock = new FakeClock();
      const { attempt, calls } = scripted([http(status)], clock);
      const failed = await failure(walkRoutes([route('a'), route('b')], attempt, options(clock)));
      expect(calls).toEqual(['a']);
      expect(failed.error.code).toBe('invalid_request');
      expect(failed.error.message).toBe(`Provider a refused the request (HTTP ${status}): status ${status}`);
      // The record keeps only the gateway's words: a provider's message could quote the prompt.
      expect(failed.error.recordedMessage).toBe(`Provider a refused the request (HTTP ${status}).`);
      expect(failed.attempts).toBe(1);
    },
  );

  it('rule 5: retries a network error like a 5xx', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = scripted([network(), network(), 'ok'], clock);
    const outcome = await walkRoutes([route('a')], attempt, options(clock));
    expect(calls).toEqual(['a', 'a', 'a']);
    expect(outcome.failures.map((f) => f.reason)).toEqual(['network_error', 'network_error (try 2)']);
  });

  it('rule 5: a per-attempt timeout fails over immediately', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = scripted([{ hang: 5_000 }, 'ok'], clock);
    const outcome = await walkRoutes([route('a', 5_000), route('b')], attempt, options(clock));
    expect(calls).toEqual(['a', 'b']);
    expect(outcome.failures).toEqual([{ provider: 'a', status: null, reason: 'timeout' }]);
    expect(clock.sleeps).toEqual([]);
  });

  it('waits a full-jitter backoff between tries: uniform in [0, min(4 s, 250 ms × 2^n))', async () => {
    const clock = new FakeClock(0, [0.5]);
    const { attempt } = scripted([http(503), http(503), 'ok'], clock);
    await walkRoutes([route('a')], attempt, options(clock));
    expect(clock.sleeps).toEqual([125, 250]);
  });

  it("lets the provider's Retry-After take precedence over the backoff", async () => {
    const clock = new FakeClock(0, [0.5]);
    const { attempt } = scripted([http(429, 3_000), 'ok'], clock);
    await walkRoutes([route('a')], attempt, options(clock));
    expect(clock.sleeps).toEqual([3_000]);
  });

  it('fails over at once when a wait would use up what is left of the deadline', async () => {
    const clock = new FakeClock(0);
    const { attempt, calls } = scripted([http(429, 30_000), 'ok'], clock);
    const outcome = await walkRoutes(
      [route('a'), route('b')],
      attempt,
      options(clock, { deadlineMs: 10_000 }),
    );
    expect(calls).toEqual(['a', 'b']);
    expect(clock.sleeps).toEqual([]);
    expect(outcome.value).toBe('served by b');
  });

  it('every route ended in 429 → 429 rate_limited with the smallest Retry-After asked for', async () => {
    const clock = new FakeClock();
    const { attempt } = scripted(
      [http(429, 2_000), http(429, 9_000), http(429, 7_000), http(429, 5_000)],
      clock,
    );
    const failed = await failure(
      walkRoutes([route('a'), route('b')], attempt, options(clock, { attemptsPerRoute: 2 })),
    );
    expect(failed.error.code).toBe('rate_limited');
    expect(failed.error.headers['Retry-After']).toBe('2');
  });

  it('every route ended in 429 without Retry-After → the next backoff, at least one second', async () => {
    const clock = new FakeClock(0, [0.999]);
    const { attempt } = scripted([http(429), http(429)], clock);
    const failed = await failure(walkRoutes([route('a')], attempt, options(clock, { attemptsPerRoute: 2 })));
    expect(failed.error.headers['Retry-After']).toBe('1');
  });

  it('a failed walk names the status of its last attempt, for a wire that words it its own way', async () => {
    const clock = new FakeClock();
    const overloaded = scripted([http(503), http(529)], clock);
    const failed = await failure(
      walkRoutes([route('a'), route('b')], overloaded.attempt, options(clock, { attemptsPerRoute: 1 })),
    );
    expect(failed.error.code).toBe('upstream_error');
    expect(failed.error.lastUpstreamStatus).toBe(529);
    const broken = scripted([http(529), network()], clock);
    const other = await failure(
      walkRoutes([route('a'), route('b')], broken.attempt, options(clock, { attemptsPerRoute: 1 })),
    );
    expect(other.error.lastUpstreamStatus).toBeNull();
  });

  it('every route timed out → 504 upstream_timeout', async () => {
    const clock = new FakeClock();
    const { attempt } = scripted([{ hang: 1_000 }, { hang: 1_000 }], clock);
    const failed = await failure(walkRoutes([route('a', 1_000), route('b', 1_000)], attempt, options(clock)));
    expect(failed.error.code).toBe('upstream_timeout');
    expect(failed.error).toBeInstanceOf(GatewayError);
  });

  it('the deadline passing ends the walk with 504 upstream_timeout', async () => {
    const clock = new FakeClock();
    const { attempt, calls } = scripted([{ hang: 60_000 }, 'ok'], clock);
    const failed = await failure(
      walkRoutes([route('a'), route('b')], attempt, options(clock, { deadlineMs: 60_000 })),
    );
    expect(calls).toEqual(['a']);
    expect(failed.error.code).toBe('upstream_timeout');
  });

  it('judges how each route ENDED: 503 then 429 on every route → 429 rate_limited', async () => {
    const clock = new FakeClock();
    const { attempt } = scripted([http(503), http(429, 1_000), http(503), http(429, 4_000)], clock);
    const failed = await failure(
      walkRoutes([route('a'), route('b')], attempt, options(clock, { attemptsPerRoute: 2 })),
    );
    expect(failed.error.code).toBe('rate_limited');
    expect(failed.error.headers['Retry-After']).toBe('1');
  });

  it('judges how each route ENDED: 503 then a timeout on every route → 504 upstream_timeout', async () => {
    const clock = new FakeClock();
    const { attempt } = scripted([http(503), { hang: 1_000 }, http(503), { hang: 1_000 }], clock);
    const failed = await failure(
      walkRoutes([route('a', 1_000), route('b', 1_000)], attempt, options(clock, { attemptsPerRoute: 3 })),
    );
    expect(failed.error.code).toBe('upstream_timeout');
  });

  it('timeout_ms bounds the time to the first byte only: a slow body after the headers is not a timeout', async () => {
    const clock = new FakeClock();
    const attempt = async (_r: PlannedRoute, { signal, onResponse }: AttemptControl) => {
      onResponse();
      clock.advance(10_000);
      signal.throwIfAborted();
      return 'slow but whole';
    };
    const outcome = await walkRoutes([route('a', 1_000)], attempt, options(clock));
    expect(outcome.value).toBe('slow but whole');
  });

  it('a mix of failures → 502 upstream_error with the whole trail', async () => {
    const clock = new FakeClock();
    const { attempt } = scripted([http(500), http(502), http(503), http(501)], clock);
    const failed = await failure(walkRoutes([route('a'), route('b')], attempt, options(clock)));
    expect(failed.error.code).toBe('upstream_error');
    expect(failed.attempts).toBe(4);
    expect(failed.failures.map((f) => `${f.provider}:${f.reason}`)).toEqual([
      'a:http_500',
      'a:http_502 (try 2)',
      'a:http_503 (try 3)',
      'b:http_501',
    ]);
  });

  it('abandons the walk when the caller aborts', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    const attempt = async () => {
      controller.abort(new Error('client went away'));
      throw http(503);
    };
    await expect(
      walkRoutes([route('a')], attempt, options(clock, { signal: controller.signal })),
    ).rejects.toThrow('client went away');
  });

  it('makes no upstream call for a caller already gone', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    controller.abort(new Error('client went away'));
    const { attempt, calls } = scripted(['ok'], clock);
    const error = await walkRoutes(
      [route('a')],
      attempt,
      options(clock, { signal: controller.signal }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WalkAbandoned);
    expect((error as WalkAbandoned).attempts).toBe(0);
    expect(calls).toEqual([]);
  });

  it('keeps the attempts and failures of a walk the caller left midway', async () => {
    const clock = new FakeClock();
    const controller = new AbortController();
    let n = 0;
    const attempt = async () => {
      n++;
      if (n === 2) controller.abort(new Error('client went away'));
      throw http(503);
    };
    const error = await walkRoutes(
      [route('a'), route('b')],
      attempt,
      options(clock, { signal: controller.signal, attemptsPerRoute: 1 }),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WalkAbandoned);
    expect((error as WalkAbandoned).attempts).toBe(2);
    expect((error as WalkAbandoned).failures.map((f) => f.provider)).toEqual(['a']);
    expect(n).toBe(2);
  });
});
