import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, type Gateway, type HttpClient } from '@tollgate/core';
import { loadConfigFile } from '@tollgate/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse } from './helpers/sse.js';
import { silentLogger } from './helpers/start-e2e-gateway.js';
import { type OpenedStorage, openSqlite } from './helpers/storage-variants.js';
import { createTenant, type Tenant } from './helpers/tenant.js';

/*
 * The offline demo models of the example config, through the whole metered path in-process
 * (`gateway.fetch(new Request(…))` on a real SQLite file): pre-flight hold, routing walk, pricing,
 * settle, ledger entry, request record. The HTTP client fails every call: nothing leaves the process.
 */

const noNetwork: HttpClient = { request: () => Promise.reject(new Error('no network in this test')) };

let opened: OpenedStorage;
let gateway: Gateway;
let tenant: Tenant;

beforeAll(async () => {
  opened = await openSqlite();
  // The example config with no provider key in the environment: only demo (and local) models are usable.
  const { catalogue, config } = loadConfigFile({
    cwd: mkdtempSync(join(tmpdir(), 'tollgate-demo-')),
    env: {},
  });
  gateway = createGateway(opened.storage, catalogue, {
    defaultRateLimitRpm: config.defaults.rate_limit_rpm,
    logger: silentLogger,
    httpClient: noNetwork,
  });
  tenant = await createTenant(opened.storage, { creditMicros: 1_000_000 });
});

afterAll(async () => {
  await gateway?.close();
  await opened?.storage.close();
  await opened?.dispose();
});

function chat(body: Record<string, unknown>): Promise<Response> {
  return gateway.fetch(
    new Request('http://gateway.test/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.inferenceKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
  );
}

/** The cost of `usage` at per-million prices in micros, rounded up once (the gateway's rule). */
function expectedCost(
  usage: { prompt_tokens: number; completion_tokens: number },
  prompt: number,
  completion: number,
) {
  const total =
    BigInt(usage.prompt_tokens) * BigInt(prompt) + BigInt(usage.completion_tokens) * BigInt(completion);
  return Number((total + 999_999n) / 1_000_000n);
}

/** The charge entries of the tenant's ledger, newest last. */
async function charges(): Promise<number[]> {
  const ledger = await opened.storage.listLedgerEntries(tenant.account.id);
  return ledger.filter((e) => e.kind === 'charge').map((e) => e.amountMicros);
}

const hello = [{ role: 'user', content: 'Hello!' }];

describe('demo models: metered like a real provider, offline', () => {
  it('a completion is priced, charged once in the ledger, and recorded', async () => {
    const before = await charges();
    const response = await chat({ model: 'demo/chat-small', messages: hello });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.model).toBe('demo/chat-small');
    expect(body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant' } });
    expect(body.choices[0].message.content).toContain('1 message');
    expect(body.usage.prompt_tokens).toBe(Math.ceil('Hello!'.length / 4));
    const cost = expectedCost(body.usage, 150_000, 600_000);
    expect(cost).toBeGreaterThan(0);
    expect(body.gateway).toMatchObject({ cost_micros: cost, provider: 'demo', model: 'demo/chat-small' });
    expect(response.headers.get('x-gateway-cost-usd')).not.toBeNull();

    expect(await charges()).toEqual([...before, -cost]);
    const record = await opened.storage.getRequestRecord(tenant.account.id, body.gateway.request_id);
    expect(record).toMatchObject({
      status: 'success',
      httpStatus: 200,
      model: 'demo/chat-small',
      provider: 'demo',
      promptTokens: body.usage.prompt_tokens,
      completionTokens: body.usage.completion_tokens,
      costMicros: cost,
      finishReason: 'stop',
      stream: false,
    });
    expect(await opened.storage.listReservations(tenant.account.id, Date.now())).toEqual([]);
  });

  it('a stream arrives in chunks, ends with usage and cost, and is charged and recorded', async () => {
    const before = await charges();
    const response = await chat({ model: 'demo/chat-large', messages: hello, stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseSse(await response.text());
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(text).toContain('chat-large');
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBeGreaterThan(5);
    const terminal = chunks.at(-1);
    expect(terminal.usage.completion_tokens).toBe(Math.ceil(text.length / 4));
    const cost = expectedCost(terminal.usage, 3_000_000, 15_000_000);
    expect(terminal.gateway.cost_micros).toBe(cost);
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);

    expect(await charges()).toEqual([...before, -cost]);
    const record = await opened.storage.getRequestRecord(tenant.account.id, terminal.gateway.request_id);
    expect(record).toMatchObject({ status: 'success', stream: true, costMicros: cost, provider: 'demo' });
  });

  it('max_tokens cuts the answer (finish_reason length) and only those tokens are charged', async () => {
    const response = await chat({ model: 'demo/chat-small', messages: hello, max_tokens: 4 });
    const body = await response.json();
    expect(response.status).toBe(200);
    expect(body.choices[0].finish_reason).toBe('length');
    expect(body.choices[0].message.content).toHaveLength(16);
    expect(body.usage.completion_tokens).toBe(4);
    expect(body.gateway.cost_micros).toBe(expectedCost(body.usage, 150_000, 600_000));
  });

  it('with tools offered, answers with a tool call and charges it', async () => {
    const before = await charges();
    const response = await chat({
      model: 'demo/chat-small',
      messages: [{ role: 'user', content: 'Weather in Lyon?' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
      ],
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[0].message.tool_calls[0].function).toEqual({
      name: 'get_weather',
      arguments: '{"city":"demo"}',
    });
    expect(body.gateway.cost_micros).toBeGreaterThan(0);
    expect(await charges()).toEqual([...before, -body.gateway.cost_micros]);
  });

  it('after the tool result, answers in text using it, priced on its usage and charged once', async () => {
    const before = await charges();
    const response = await chat({
      model: 'demo/chat-small',
      messages: [
        { role: 'user', content: 'Weather in Lyon?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny, 21 C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather' } }],
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.choices[0].message.content).toContain('get_weather returned "sunny, 21 C"');
    const cost = expectedCost(body.usage, 150_000, 600_000);
    expect(body.gateway.cost_micros).toBe(cost);
    expect(await charges()).toEqual([...before, -cost]);
  });

  it('a streamed response_format json_schema answer is JSON of that shape, charged on its usage', async () => {
    const before = await charges();
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, score: { type: 'integer', minimum: 1, maximum: 5 } },
      required: ['city', 'score'],
    };
    const response = await chat({
      model: 'demo/chat-small',
      messages: hello,
      stream: true,
      response_format: { type: 'json_schema', json_schema: { name: 'rating', schema } },
    });
    const chunks = parseSse(await response.text())
      .slice(0, -1)
      .map((e) => JSON.parse(e.data));
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    expect(JSON.parse(text)).toEqual({ city: 'demo', score: 1 });
    const terminal = chunks.at(-1);
    expect(terminal.usage.completion_tokens).toBe(Math.ceil(text.length / 4));
    expect(terminal.gateway.cost_micros).toBe(expectedCost(terminal.usage, 150_000, 600_000));
    expect(await charges()).toEqual([...before, -terminal.gateway.cost_micros]);
  });

  it('embeddings, images and rerank on the demo models: priced at their rates, charged and recorded', async () => {
    const post = (path: string, body: unknown) =>
      gateway.fetch(
        new Request(`http://gateway.test${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${tenant.inferenceKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        }),
      );
    const before = await charges();
    const input = 'lorem ipsum '.repeat(1000);
    const embedded = await (await post('/v1/embeddings', { model: 'demo/embedding-small', input })).json();
    // 12,000 characters → 3,000 tokens at $0.02 per million: 60 micros.
    expect(embedded.usage).toEqual({ prompt_tokens: 3_000, total_tokens: 3_000 });
    expect(embedded.data[0].embedding).toHaveLength(256);
    expect(embedded.gateway).toMatchObject({
      cost_micros: 60,
      provider: 'demo',
      model: 'demo/embedding-small',
    });

    const images = await (
      await post('/v1/images/generations', { model: 'demo/image-small', prompt: 'a fox', n: 3 })
    ).json();
    expect(images.data).toHaveLength(3);
    expect(images.gateway.cost_micros).toBe(3 * 40_000);

    const ranked = await (
      await post('/v1/rerank', { model: 'demo/rerank-small', query: 'fox', documents: ['a dog', 'a fox'] })
    ).json();
    expect(ranked.results.map((r: { index: number }) => r.index)).toEqual([1, 0]);
    expect(ranked.gateway.cost_micros).toBe(2_000);

    expect(await charges()).toEqual([...before, -60, -120_000, -2_000]);
    for (const answer of [embedded, images, ranked]) {
      const record = await opened.storage.getRequestRecord(tenant.account.id, answer.gateway.request_id);
      expect(record).toMatchObject({
        status: 'success',
        provider: 'demo',
        costMicros: answer.gateway.cost_micros,
      });
    }
  });

  it('a model whose provider has no key still answers 503, the demo does not make it usable', async () => {
    const response = await chat({ model: 'openai/gpt-4o-mini', messages: hello });
    expect(response.status).toBe(503);
    expect((await response.json()).error.code).toBe('no_provider_available');
  });
});
