import type { GatewayConfigInput } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { createTestGateway } from './create-test-gateway.js';

const config: GatewayConfigInput = {
  providers: {
    oa: { format: 'openai', base_url: 'https://oa.example/v1', api_key: 'sk-oa' },
    an: { format: 'anthropic', base_url: 'https://an.example/v1', api_key_env: 'AN_KEY', timeout_ms: 5000 },
    co: { format: 'cohere', base_url: 'https://co.example/v2', api_key_env: 'CO_KEY' },
    search: { format: 'web-search', base_url: 'https://search.example', api_key: 'exa' },
  },
  models: [
    {
      id: 'x/chat',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'an', upstream_model: 'claude', pricing: { prompt: '1', completion: '1' } },
        { provider: 'oa', upstream_model: 'gpt', pricing: { prompt: '1', completion: '1' } },
      ],
    },
    {
      id: 'x/rerank',
      type: 'rerank',
      endpoints: [{ provider: 'co', upstream_model: 'rerank-3', pricing: { search: '2' } }],
    },
  ],
};

const chat = { model: 'x/chat', messages: [{ role: 'user', content: 'hi' }], max_tokens: 10 };
const anthropicMessage = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude',
  content: [{ type: 'text', text: 'ok' }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 3, output_tokens: 1 },
};

describe('createTestGateway', () => {
  it('gives every api_key_env provider a placeholder key, sent upstream', async () => {
    const gw = await createTestGateway(config);
    try {
      gw.upstream('an').reply(200, anthropicMessage);
      expect((await gw.request('/v1/chat/completions', chat)).status).toBe(200);
      expect(gw.upstream('an').calls[0]).toMatchObject({
        method: 'POST',
        url: 'https://an.example/v1/messages',
        headers: { 'x-api-key': 'test-key-an' },
        body: { model: 'claude' },
      });
    } finally {
      await gw.close();
    }
  });

  it('streams Anthropic events in their own framing', async () => {
    const gw = await createTestGateway(config);
    try {
      gw.upstream('an').stream(
        [
          {
            type: 'message_start',
            message: { ...anthropicMessage, content: [], usage: { input_tokens: 3, output_tokens: 0 } },
          },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'streamed' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
          { type: 'message_stop' },
        ],
        { delayMs: 10 },
      );
      const started = gw.clock.now();
      const text = await (await gw.request('/v1/chat/completions', { ...chat, stream: true })).text();
      expect(text).toContain('streamed');
      expect(gw.clock.now() - started).toBe(50);
    } finally {
      await gw.close();
    }
  });

  it('fails over on a scripted timeout (the clock reaches timeout_ms) and on a reset', async () => {
    const gw = await createTestGateway(config);
    try {
      gw.upstream('an').fail('timeout');
      gw.upstream('oa')
        .fail('reset')
        .reply(200, {
          id: 'c',
          object: 'chat.completion',
          created: 1,
          model: 'gpt',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        });
      const started = gw.clock.now();
      const response = await gw.request('/v1/chat/completions', chat);
      expect(response.status).toBe(200);
      expect(gw.clock.now() - started).toBeGreaterThanOrEqual(5000);
      expect(gw.upstream('oa').calls).toHaveLength(2);
    } finally {
      await gw.close();
    }
  });

  it('answers Cohere rerank with always(), and names the provider and path when nothing is queued', async () => {
    const gw = await createTestGateway(config);
    try {
      gw.upstream('co').always(200, { id: 'r', results: [{ index: 0, relevance_score: 0.9 }], meta: {} });
      const body = { model: 'x/rerank', query: 'q', documents: ['a'] };
      expect((await gw.request('/v1/rerank', body)).status).toBe(200);
      expect((await gw.request('/v1/rerank', body)).status).toBe(200);
      await expect(gw.request('/v1/chat/completions', chat)).rejects.toThrow(
        'the fake upstream "an" has no answer for POST /v1/messages',
      );
    } finally {
      await gw.close();
    }
  });

  it('always() with a function answers each request from what it asked', async () => {
    const gw = await createTestGateway(config);
    try {
      gw.upstream('co').always((upstream, call) => {
        const { documents } = call.body as { documents: string[] };
        upstream.reply(200, {
          id: 'r',
          results: documents.map((_, index) => ({ index, relevance_score: 0.5 })),
        });
      });
      const response = await gw.request('/v1/rerank', {
        model: 'x/rerank',
        query: 'q',
        documents: ['a', 'b', 'c'],
      });
      expect((await response.json()).results).toHaveLength(3);
    } finally {
      await gw.close();
    }
  });

  it('holdUntil() keeps every answer back until the test releases it', async () => {
    const gw = await createTestGateway(config);
    try {
      let release!: () => void;
      gw.upstream('an').holdUntil(new Promise<void>((resolve) => (release = resolve)));
      gw.upstream('an').always(200, anthropicMessage);
      let answered = false;
      const pending = gw.request('/v1/chat/completions', chat).then((response) => {
        answered = true;
        return response;
      });
      while (gw.upstream('an').calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(answered).toBe(false);
      release();
      expect((await pending).status).toBe(200);
      gw.upstream('an').holdUntil(null);
      expect((await gw.request('/v1/chat/completions', chat)).status).toBe(200);
    } finally {
      await gw.close();
    }
  });

  it('refuses two providers on one base_url, and an unknown provider name', async () => {
    const shared: GatewayConfigInput = {
      providers: {
        a: { format: 'openai', base_url: 'https://same.example/v1', api_key: 'k' },
        b: { format: 'openai', base_url: 'https://same.example/v1/', api_key: 'k' },
      },
      models: [],
    };
    await expect(createTestGateway(shared)).rejects.toThrow('share base_url https://same.example/v1');
    const gw = await createTestGateway(config);
    expect(() => gw.upstream('nope')).toThrow('no provider "nope" in the config');
    await gw.close();
  });
});

describe('createTestGateway: the other OpenAI endpoints and the web-search backend', () => {
  const more: GatewayConfigInput = {
    providers: {
      oa: { format: 'openai', base_url: 'https://oa.example/v1', api_key: 'sk-oa' },
      exa: { format: 'web-search', base_url: 'https://exa.example', api_key: 'exa-key' },
    },
    models: [
      {
        id: 'x/chat',
        max_output_tokens: 50,
        endpoints: [{ provider: 'oa', upstream_model: 'gpt', pricing: { prompt: '1', completion: '1' } }],
      },
      {
        id: 'x/embed',
        type: 'embedding',
        endpoints: [{ provider: 'oa', upstream_model: 'emb', pricing: { prompt: '0.02' } }],
      },
      {
        id: 'x/image',
        type: 'image',
        endpoints: [{ provider: 'oa', upstream_model: 'img', pricing: { image: '0.04' } }],
      },
    ],
  };

  it('answers embeddings and images from scripted OpenAI bodies, priced', async () => {
    const gw = await createTestGateway(more);
    try {
      gw.upstream('oa').reply(200, {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }],
        model: 'emb',
        usage: { prompt_tokens: 4, total_tokens: 4 },
      });
      const embedded = await gw.request('/v1/embeddings', { model: 'x/embed', input: 'hello' });
      expect(embedded.status).toBe(200);
      expect((await embedded.json()).data[0].embedding).toEqual([0.1, 0.2]);

      gw.upstream('oa').reply(200, { created: 1, data: [{ url: 'https://img.example/1.png' }] });
      const drawn = await gw.request('/v1/images/generations', { model: 'x/image', prompt: 'a cat' });
      expect(drawn.status).toBe(200);
      expect(gw.upstream('oa').calls.map((c) => new URL(c.url).pathname)).toEqual([
        '/v1/embeddings',
        '/v1/images/generations',
      ]);
      // An image at $0.04, and 4 prompt tokens at $0.02/M (rounded up to a micro).
      expect((await gw.records()).map((r) => r.costMicros)).toEqual([1, 40_000]);
    } finally {
      await gw.close();
    }
  });

  it('runs the web plugin against the scripted search backend', async () => {
    const gw = await createTestGateway(more);
    try {
      gw.upstream('exa').reply(200, {
        results: [{ url: 'https://news.example/a', title: 'A', text: 'Something happened.' }],
        costDollars: { total: 0.005 },
      });
      gw.upstream('oa').reply(200, {
        id: 'c',
        object: 'chat.completion',
        created: 1,
        model: 'gpt',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'It happened.' }, finish_reason: 'stop' },
        ],
        usage: { prompt_tokens: 30, completion_tokens: 3, total_tokens: 33 },
      });
      const response = await gw.request('/v1/chat/completions', {
        model: 'x/chat',
        plugins: [{ id: 'web' }],
        messages: [{ role: 'user', content: 'news?' }],
      });
      expect(response.status).toBe(200);
      expect(gw.upstream('exa').calls[0]).toMatchObject({
        url: 'https://exa.example/search',
        headers: { 'x-api-key': 'exa-key' },
        body: { query: 'news?' },
      });
    } finally {
      await gw.close();
    }
  });
});
