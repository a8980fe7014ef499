// The testing kit under Jest (ESM): a failover, a price and a cap, with Jest's own globals.
import { createTestGateway } from '@tollgate/testing';
import { anthropicAnswer, config, hello, openaiAnswer } from './build/config.js';

describe('acme/chat under Jest', () => {
  it('fails over to backup when primary answers 503', async () => {
    const gw = await createTestGateway(config);
    gw.upstream('primary').always(503, { error: { message: 'overloaded' } });
    gw.upstream('backup').reply(200, anthropicAnswer('Hi from backup'));
    const response = await gw.request('/v1/chat/completions', hello);
    expect(response.status).toBe(200);
    expect((await response.json()).gateway.provider).toBe('backup');
    await gw.close();
  });

  it('charges the price of the route that answered', async () => {
    const gw = await createTestGateway(config);
    gw.upstream('primary').reply(200, openaiAnswer('Hi', { prompt_tokens: 10, completion_tokens: 50 }));
    expect((await gw.request('/v1/chat/completions', hello)).status).toBe(200);
    expect(await gw.balanceUsd()).toBe('9.999580');
    await gw.close();
  });

  it('refuses a request the credit cannot cover with 402', async () => {
    const gw = await createTestGateway(config, { creditUsd: '0.0001' });
    expect((await gw.request('/v1/chat/completions', hello)).status).toBe(402);
    await gw.close();
  });

  it('fails fast when a fake has no answer', async () => {
    const gw = await createTestGateway(config);
    await expect(gw.request('/v1/chat/completions', hello)).rejects.toThrow(
      '"primary" has no answer for POST /v1/chat/completions',
    );
    await gw.close();
  });
});
