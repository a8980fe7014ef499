import { describe, expect, it } from 'vitest';
import { ask, casesConfig, firstAnswer, secondAnswer } from './cases.test-support.js';
import { createTestGateway } from './create-test-gateway.js';

describe('the kit under vitest: a failover, a price, a cap', () => {
  it('a 503 from the first provider fails over to the second', async () => {
    const gw = await createTestGateway(casesConfig);
    try {
      gw.upstream('first').always(503, {
        type: 'error',
        error: { type: 'overloaded_error', message: 'busy' },
      });
      gw.upstream('second').reply(200, secondAnswer);
      const response = await gw.request('/v1/chat/completions', ask);
      expect(response.status).toBe(200);
      expect((await response.json()).choices[0].message.content).toBe('from second');
      const [record] = await gw.records();
      expect(record).toMatchObject({ provider: 'second', status: 'success' });
    } finally {
      await gw.close();
    }
  });

  it('the first provider’s price: 100 × $3/M + 50 × $15/M = 1,050 micro-dollars', async () => {
    const gw = await createTestGateway(casesConfig);
    try {
      gw.upstream('first').reply(200, firstAnswer);
      expect((await gw.request('/v1/chat/completions', ask)).status).toBe(200);
      expect(await gw.balanceUsd()).toBe('9.998950');
      expect((await gw.ledger()).map((e) => e.amountMicros)).toEqual([10_000_000, -1_050]);
    } finally {
      await gw.close();
    }
  });

  it('a credit below the hold is refused 402 and nothing reaches a provider', async () => {
    const gw = await createTestGateway(casesConfig, { creditUsd: '0.001' });
    try {
      const response = await gw.request('/v1/chat/completions', ask);
      expect(response.status).toBe(402);
      expect(gw.upstream('first').calls).toEqual([]);
      expect(await gw.balanceUsd()).toBe('0.001000');
    } finally {
      await gw.close();
    }
  });
});
