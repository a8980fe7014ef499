import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTestGateway } from '@tollgate/testing';
import { ask, casesConfig, firstAnswer, secondAnswer } from './cases.test-support.js';

describe('the kit under node:test: a failover, a price, a cap', () => {
  it('a 503 from the first provider fails over to the second', async () => {
    const gw = await createTestGateway(casesConfig);
    try {
      gw.upstream('first').always(503, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'busy' },
      });
      gw.upstream('second').reply(200, secondAnswer);
      const response = await gw.request('/v1/chat/completions', ask);
      assert.equal(response.status, 200);
      assert.equal((await response.json()).choices[0].message.content, 'from second');
      assert.equal((await gw.records())[0]?.provider, 'second');
    } finally {
      await gw.close();
    }
  });

  it('the first provider’s price: 100 × $3/M + 50 × $15/M = 1,050 micro-dollars', async () => {
    const gw = await createTestGateway(casesConfig);
    try {
      gw.upstream('first').reply(200, firstAnswer);
      assert.equal((await gw.request('/v1/chat/completions', ask)).status, 200);
      assert.equal(await gw.balanceUsd(), '9.998950');
    } finally {
      await gw.close();
    }
  });

  it('a credit below the hold is refused 402 and nothing reaches a provider', async () => {
    const gw = await createTestGateway(casesConfig, { creditUsd: '0.001' });
    try {
      assert.equal((await gw.request('/v1/chat/completions', ask)).status, 402);
      assert.equal(gw.upstream('first').calls.length, 0);
    } finally {
      await gw.close();
    }
  });
});
