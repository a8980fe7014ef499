import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { anthropicAnswer, config, hello, openaiAnswer } from './config.js';

describe('acme/chat routing, prices and limits', () => {
  let gw: TestGateway;
  beforeEach(async () => {
    gw = await createTestGateway(config, { creditUsd: '10' });
  });
  afterEach(async () => {
    await gw.close();
  });

  it('fails over to backup when primary answers 503', async () => {
    gw.upstream('primary').always(503, { error: { message: 'overloaded' } });
    gw.upstream('backup').reply(200, anthropicAnswer('Hi from backup'));

    const response = await gw.request('/v1/chat/completions', hello);

    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.choices[0].message.content).toBe('Hi from backup');
    expect(body.gateway.provider).toBe('backup');
    expect(gw.upstream('backup').calls[0]?.body).toMatchObject({ model: 'chat-1-backup' });
  });

  it('charges the price of the route that answered', async () => {
    gw.upstream('primary').reply(200, openaiAnswer('Hi', { prompt_tokens: 10, completion_tokens: 50 }));

    const response = await gw.request('/v1/chat/completions', hello);

    expect(response.status).toBe(200);
    // 10 prompt tokens at $2/M + 50 completion tokens at $8/M = $0.00042.
    expect((await response.json()).gateway.cost_usd).toBe(0.00042);
    expect(await gw.balanceUsd()).toBe('9.999580');
    const [record] = await gw.records();
    expect(record).toMatchObject({ status: 'success', costMicros: 420 });
  });

  it('refuses a request the credit cannot cover with 402', async () => {
    const poor = await createTestGateway(config, { creditUsd: '0.0001' });
    try {
      const response = await poor.request('/v1/chat/completions', hello);
      expect(response.status).toBe(402);
      expect((await response.json()).error.code).toBe('insufficient_credit');
      expect(poor.upstream('primary').calls).toHaveLength(0);
    } finally {
      await poor.close();
    }
  });

  it('answers 429 over the rate limit, and again after the window passes', async () => {
    gw.upstream('primary').always(200, openaiAnswer('Hi'));

    expect((await gw.request('/v1/chat/completions', hello)).status).toBe(200);
    expect((await gw.request('/v1/chat/completions', hello)).status).toBe(200);
    const limited = await gw.request('/v1/chat/completions', hello);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeTruthy();

    gw.clock.advance(60_000);
    expect((await gw.request('/v1/chat/completions', hello)).status).toBe(200);
  });

  it('streams the answer and charges for it', async () => {
    const chunk = (delta: object, extra: object = {}) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1_700_000_000,
      model: 'chat-1',
      choices: [{ index: 0, delta, finish_reason: null }],
      ...extra,
    });
    gw.upstream('primary').stream([
      chunk({ role: 'assistant', content: 'Hel' }),
      chunk({ content: 'lo!' }),
      { ...chunk({}), choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } },
    ]);

    const response = await gw.request('/v1/chat/completions', { ...hello, stream: true });

    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const text = await response.text();
    const deltas = text
      .split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(deltas).toBe('Hello!');
    expect(text).toContain('data: [DONE]');
    const [record] = await gw.records();
    // 10 prompt tokens at $2/M + 2 completion tokens at $8/M = 36 micro-dollars.
    expect(record).toMatchObject({ status: 'success', costMicros: 36 });
  });

  it('fails fast when a fake has no answer', async () => {
    await expect(gw.request('/v1/chat/completions', hello)).rejects.toThrow(
      /fake upstream "primary" has no answer for POST \/v1\/chat\/completions/,
    );
  });
});
