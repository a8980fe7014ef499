import { describe, expect, it } from 'vitest';
import { type ChatSpanInput, chatRequestSpan, chatSpanAttributes } from './request-span.js';

const served: ChatSpanInput = {
  requestId: 'req_123',
  requestedModel: 'anthropic/claude-sonnet-4',
  servedModel: 'anthropic/claude-sonnet-4',
  provider: 'anthropic',
  inputTokens: 1200,
  outputTokens: 80,
  cachedTokens: 1000,
  finishReason: 'stop',
  attempts: 1,
  costMicros: 4_500,
  ttftMs: 310.4,
  durationMs: 1_250.6,
  httpStatus: 200,
  stream: true,
};

describe('chatSpanAttributes', () => {
  it('uses the GenAI names where they exist and gateway.* for the rest', () => {
    expect(chatSpanAttributes(served)).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'anthropic/claude-sonnet-4',
      'gen_ai.response.model': 'anthropic/claude-sonnet-4',
      'gen_ai.usage.input_tokens': 1200,
      'gen_ai.usage.output_tokens': 80,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'gen_ai.response.finish_reasons': ['stop'],
      'gateway.request_id': 'req_123',
      'gateway.stream': true,
      'gateway.attempts': 1,
      'gateway.cost_micros': 4_500,
      'gateway.ttft_ms': 310,
      'gateway.duration_ms': 1_251,
      'gateway.cached_tokens': 1000,
      'gateway.status_code': 200,
      'error.type': undefined,
    });
  });

  it('sets error.type to the error code and leaves out what a failed request never had', () => {
    const attributes = chatSpanAttributes({
      requestId: 'req_9',
      requestedModel: 'openai/gpt-4o',
      attempts: 3,
      durationMs: 900,
      httpStatus: 502,
      errorCode: 'upstream_error',
      stream: false,
    });
    expect(attributes['error.type']).toBe('upstream_error');
    expect(attributes['gen_ai.response.finish_reasons']).toBeUndefined();
    expect(attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    expect(attributes['gateway.ttft_ms']).toBeUndefined();
  });

  it('copies only the typed fields, so text on the input never reaches the span', () => {
    const leaky = { ...served, prompt: 'CANARY', messages: [{ content: 'CANARY' }] } as ChatSpanInput;
    expect(JSON.stringify(chatSpanAttributes(leaky))).not.toContain('CANARY');
  });
});

describe('chatRequestSpan', () => {
  it("names the span '{operation} {requested model}' and takes its status from the error code", () => {
    const ok = chatRequestSpan({ ...served, startMs: 1, endMs: 2 });
    expect(ok).toMatchObject({ name: 'chat anthropic/claude-sonnet-4', requestId: 'req_123', status: 'ok' });
    expect(ok).not.toHaveProperty('errorCode');
    const failed = chatRequestSpan({ ...served, errorCode: 'rate_limited', startMs: 1, endMs: 2 });
    expect(failed).toMatchObject({ status: 'error', errorCode: 'rate_limited' });
  });
});
