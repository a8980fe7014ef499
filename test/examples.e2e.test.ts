import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_MODEL, type RunningExample } from '../examples/demo-gateway.js';
import { startEmbedInNode } from '../examples/embed-in-node.js';
import { startExpressExample } from '../examples/express.js';
import { startHonoExample } from '../examples/hono.js';
import { startNextRouteHandler } from '../examples/next-route-handler.js';

/** The gateway's own block on a chat completion (not in the SDK's types). */
type WithGateway = { gateway?: { cost_micros?: number; model?: string } };

const examples: [string, (port: number) => Promise<RunningExample>, string][] = [
  ['embed-in-node', startEmbedInNode, '/v1'],
  ['express', startExpressExample, '/llm/v1'],
  ['hono', startHonoExample, '/llm/v1'],
  ['next-route-handler', startNextRouteHandler, '/llm/v1'],
];

describe.each(examples)('examples/%s.ts', (_name, start, mountedAt) => {
  let running: RunningExample;
  let client: OpenAI;
  beforeAll(async () => {
    running = await start(0);
    client = new OpenAI({ baseURL: running.url, apiKey: running.key, maxRetries: 0, timeout: 10_000 });
  });
  afterAll(() => running?.close());

  it(`serves the OpenAI API at ${mountedAt} of a free port`, () => {
    expect(new URL(running.url).pathname).toBe(mountedAt);
    expect(Number(new URL(running.url).port)).toBeGreaterThan(0);
  });

  it('answers a chat completion through the OpenAI SDK, metered', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: DEMO_MODEL, messages: [{ role: 'user', content: 'Hello' }] })
      .withResponse();
    expect(response.status).toBe(200);
    expect(data.choices[0]?.message.content).toBeTruthy();
    const { gateway } = data as WithGateway;
    expect(gateway?.model).toBe(DEMO_MODEL);
    expect(gateway?.cost_micros).toBeGreaterThan(0);
  });

  it('streams a chat completion through the OpenAI SDK', async () => {
    const stream = await client.chat.completions.create({
      model: DEMO_MODEL,
      messages: [{ role: 'user', content: 'Hello' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage ??= chunk.usage ?? undefined;
    }
    expect(text.length).toBeGreaterThan(0);
    expect(usage).toMatchObject({ completion_tokens: expect.any(Number) });
  });

  it('answers /healthz and the error envelope under the mount point', async () => {
    const base = running.url.replace(/\/v1$/, '');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const missing = await fetch(`${running.url}/no-such-route`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatchObject({ code: 'not_found' });
  });
});

describe('examples/express.ts', () => {
  let running: RunningExample;
  beforeAll(async () => {
    running = await startExpressExample(0);
  });
  afterAll(() => running?.close());

  it('keeps express.json() in front of the gateway, which still answers', async () => {
    const origin = new URL(running.url).origin;
    // The app's own route shows the global parser ran…
    const echo = await fetch(`${origin}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ hello: 'world' }),
    });
    expect(await echo.json()).toEqual({ received: { hello: 'world' } });
    // …and the gateway behind it got the body it had already read.
    const client = new OpenAI({ baseURL: running.url, apiKey: running.key, maxRetries: 0, timeout: 10_000 });
    const completion = await client.chat.completions.create({
      model: DEMO_MODEL,
      messages: [{ role: 'user', content: 'Hello' }],
    });
    expect((completion as WithGateway).gateway?.cost_micros).toBeGreaterThan(0);
  });
});

describe.each([
  ['hono', startHonoExample],
  ['next-route-handler', startNextRouteHandler],
] as const)('examples/%s.ts with basePath', (_name, start) => {
  let running: RunningExample;
  beforeAll(async () => {
    running = await start(0);
  });
  afterAll(() => running?.close());

  it('describes the base path in the OpenAPI document', async () => {
    const document = await (await fetch(running.url.replace(/\/v1$/, '/api/openapi.json'))).json();
    expect(document.servers).toEqual([{ url: '/llm' }]);
  });
});
