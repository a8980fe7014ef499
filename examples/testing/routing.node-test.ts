import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { createTestGateway, type TestGateway } from '@tollgate/testing';
import { anthropicAnswer, config, hello, openaiAnswer } from './config.js';

describe('acme/chat routing, prices and limits (node:test)', () => {
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

    assert.equal(response.status, 200);
    const body = await response.json();
    assert.equal(body.choices[0].message.content, 'Hi from backup');
    assert.equal(body.gateway.provider, 'backup');
  });

  it('charges the price of the route that answered', async () => {
    gw.upstream('primary').reply(200, openaiAnswer('Hi', { prompt_tokens: 10, completion_tokens: 50 }));

    const response = await gw.request('/v1/chat/completions', hello);

    assert.equal(response.status, 200);
    // 10 prompt tokens at $2/M + 50 completion tokens at $8/M = $0.00042.
    assert.equal((await response.json()).gateway.cost_usd, 0.00042);
    assert.equal(await gw.balanceUsd(), '9.999580');
    const [record] = await gw.records();
    assert.equal(record?.costMicros, 420);
  });

  it('refuses a request the credit cannot cover with 402', async () => {
    const poor = await createTestGateway(config, { creditUsd: '0.0001' });
    try {
      const response = await poor.request('/v1/chat/completions', hello);
      assert.equal(response.status, 402);
      assert.equal((await response.json()).error.code, 'insufficient_credit');
      assert.equal(poor.upstream('primary').calls.length, 0);
    } finally {
      await poor.close();
    }
  });

  it('answers 429 over the rate limit, and again after the window passes', async () => {
    gw.upstream('primary').always(200, openaiAnswer('Hi'));

    assert.equal((await gw.request('/v1/chat/completions', hello)).status, 200);
    assert.equal((await gw.request('/v1/chat/completions', hello)).status, 200);
    assert.equal((await gw.request('/v1/chat/completions', hello)).status, 429);

    gw.clock.advance(60_000);
    assert.equal((await gw.request('/v1/chat/completions', hello)).status, 200);
  });

  it('fails fast when a fake has no answer', async () => {
    await assert.rejects(
      gw.request('/v1/chat/completions', hello),
      /"primary" has no answer for POST \/v1\/chat\/completions/,
    );
  });
});
