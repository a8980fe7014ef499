import { type GatewayConfigInput, systemClock } from '@tollgate/core';
import { createSqliteStorage } from '@tollgate/storage-sqlite';
import { describe, expect, it } from 'vitest';
import { createTestGateway } from './create-test-gateway.js';

const config: GatewayConfigInput = {
  providers: {
    slow: { format: 'openai', base_url: 'https://slow.example/v1', api_key: 'sk-slow', timeout_ms: 50 },
    oa: { format: 'openai', base_url: 'https://oa.example/v1', api_key: 'sk-oa' },
  },
  models: [
    {
      id: 'x/chat',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'slow', upstream_model: 'gpt-slow', pricing: { prompt: '1', completion: '1' } },
        { provider: 'oa', upstream_model: 'gpt', pricing: { prompt: '1', completion: '1' } },
      ],
    },
  ],
};

const chat = { model: 'x/chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
const completion = {
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'gpt',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

describe('createTestGateway with a store and a clock of the test', () => {
  it('runs on the given store, creates its account there and leaves it open', async () => {
    const storage = await createSqliteStorage({ path: ':memory:' });
    try {
      const gw = await createTestGateway(config, { storage, creditUsd: '1' });
      gw.upstream('slow').reply(200, completion);
      expect((await gw.request('/v1/chat/completions', chat)).status).toBe(200);
      expect(gw.storage).toBe(storage);
      expect((await storage.getAccount(gw.accountId))?.balanceMicros).toBe(1_000_000 - 2);
      await gw.close();
      expect(await storage.listLedgerEntries(gw.accountId)).toHaveLength(2);
    } finally {
      await storage.close();
    }
  });

  it('runs on real time with a clock of its own: a scripted timeout ends at the real timeout_ms', async () => {
    const gw = await createTestGateway(config, { clock: systemClock });
    try {
      expect(gw.clock).toBe(systemClock);
      gw.upstream('slow').fail('timeout');
      gw.upstream('oa').reply(200, completion);
      const started = Date.now();
      expect((await gw.request('/v1/chat/completions', chat)).status).toBe(200);
      expect(Date.now() - started).toBeGreaterThanOrEqual(45);
      expect(gw.upstream('oa').calls).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });

  it('reply() takes a Web Response as it stands', async () => {
    const gw = await createTestGateway(config, { gateway: { attemptsPerRoute: 1 } });
    try {
      gw.upstream('slow').reply(
        new Response('{"error":{"message":"busy"}}', { status: 503, headers: { 'retry-after': '0' } }),
      );
      gw.upstream('oa').reply(new Response(JSON.stringify(completion), { status: 200 }));
      const response = await gw.request('/v1/chat/completions', chat);
      expect(response.status).toBe(200);
      expect((await response.json()).gateway).toMatchObject({ provider: 'oa', attempts: 2 });
    } finally {
      await gw.close();
    }
  });
});

describe('FakeUpstream.handle', () => {
  it('answers from a fetch function of the test, given the request as the gateway sent it', async () => {
    const gw = await createTestGateway(config, { gateway: { attemptsPerRoute: 1 } });
    try {
      const seen: string[] = [];
      gw.upstream('slow').handle(async () => {
        throw new TypeError('fetch failed');
      });
      gw.upstream('oa').handle(async (url, init) => {
        seen.push(`${init?.method} ${String(url)} ${JSON.parse(String(init?.body)).model}`);
        expect(init?.signal).toBeInstanceOf(AbortSignal);
        return Response.json(completion);
      });
      const response = await gw.request('/v1/chat/completions', chat);
      expect((await response.json()).gateway).toMatchObject({ provider: 'oa', attempts: 2 });
      expect(seen).toEqual(['POST https://oa.example/v1/chat/completions gpt']);
      expect(gw.upstream('oa').calls).toHaveLength(1);
    } finally {
      await gw.close();
    }
  });
});
