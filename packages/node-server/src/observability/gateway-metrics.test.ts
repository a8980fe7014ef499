import type { RequestSummary } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { GatewayMetrics } from './gateway-metrics.js';

const summary = (over: Partial<RequestSummary>): RequestSummary => ({
  requestId: 'req_1',
  method: 'POST',
  endpoint: 'chat.completions',
  accountId: 'acct_1',
  keyId: 'key_1',
  model: 'acme/gpt',
  provider: 'openai',
  status: 200,
  errorCode: null,
  outcome: 'success',
  stream: false,
  promptTokens: 1,
  completionTokens: 1,
  cachedTokens: 0,
  costMicros: 7,
  overrunMicros: 0,
  attempts: 1,
  ttftMs: null,
  durationMs: 12,
  ...over,
});

const lines = async (metrics: GatewayMetrics) => (await metrics.text()).split('\n');

describe('GatewayMetrics', () => {
  it('keeps its own registry: two instances do not share counts', async () => {
    const a = new GatewayMetrics({ processMetrics: false });
    const b = new GatewayMetrics({ processMetrics: false });
    a.requestFinished(summary({}));
    expect(await lines(a)).toContain(
      'tollgate_requests_total{endpoint="chat.completions",model="acme/gpt",provider="openai",status="200"} 1',
    );
    expect((await lines(b)).some((line) => line.startsWith('tollgate_requests_total{'))).toBe(false);
  });

  it('a model outside the catalogue that never served is counted as `other`', async () => {
    const metrics = new GatewayMetrics({ models: ['acme/gpt'], processMetrics: false });
    metrics.requestFinished(
      summary({ model: 'made/up', provider: null, status: 404, costMicros: 0, attempts: 0 }),
    );
    metrics.requestFinished(
      summary({ model: 'acme/gpt', provider: null, status: 402, costMicros: 0, attempts: 0 }),
    );
    const text = await lines(metrics);
    expect(text).toContain(
      'tollgate_requests_total{endpoint="chat.completions",model="other",provider="",status="404"} 1',
    );
    expect(text).toContain(
      'tollgate_requests_total{endpoint="chat.completions",model="acme/gpt",provider="",status="402"} 1',
    );
  });

  it('holds open: up on holdTaken, down once when that request finishes', async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.holdTaken('req_a');
    metrics.holdTaken('req_b');
    expect(await lines(metrics)).toContain('tollgate_holds_open 2');
    metrics.requestFinished(summary({ requestId: 'req_a' }));
    metrics.requestFinished(summary({ requestId: 'req_x' }));
    expect(await lines(metrics)).toContain('tollgate_holds_open 1');
  });

  it('attempts: each failure as it fails, plus the one that served', async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    const failure = { requestId: 'req_1', model: 'acme/gpt', status: 503, reason: 'http_503', attempt: 1 };
    metrics.upstreamAttemptFailed({ ...failure, provider: 'openai' });
    metrics.requestFinished(summary({ provider: 'backup', attempts: 2, costMicros: 5, ttftMs: 250 }));
    const text = await lines(metrics);
    expect(text).toContain('tollgate_upstream_attempts_total{provider="openai"} 1');
    expect(text).toContain('tollgate_upstream_attempts_total{provider="backup"} 1');
    expect(text).toContain('tollgate_upstream_failures_total{provider="openai",reason="http_503"} 1');
    expect(text).toContain('tollgate_spend_micros_total{model="acme/gpt",provider="backup"} 5');
    expect(text).toContain(
      'tollgate_time_to_first_token_seconds_bucket{le="0.25",model="acme/gpt",provider="backup"} 1',
    );
  });

  it('counts charges capped at their hold, and what the cap did not charge', async () => {
    const metrics = new GatewayMetrics({ processMetrics: false });
    metrics.requestFinished(summary({}));
    metrics.requestFinished(summary({ requestId: 'req_2', overrunMicros: 1_250 }));
    const text = await lines(metrics);
    expect(text).toContain('tollgate_charge_overruns_total{model="acme/gpt",provider="openai"} 1');
    expect(text).toContain('tollgate_charge_overrun_micros_total{model="acme/gpt",provider="openai"} 1250');
  });
});
