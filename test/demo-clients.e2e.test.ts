import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { hashApiKey, type LedgerEntry, type Storage } from '@tollgate/core';
import { openStorage } from '@tollgate/node-server';
import { embed, generateObject, generateText, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { chargesOf, settledGeneration } from './helpers/chat-wire.js';
import { CliProcess, cliEnv, EXAMPLE_CONFIG } from './helpers/cli-process.js';
import { call } from './helpers/http.js';

/*
 * A newcomer's first hour, offline: `tollgate serve` on the example config with no provider key,
 * and real clients — the openai SDK's tool runner, the AI SDK's multi-step generateText and
 * generateObject, LangChain's OpenAIEmbeddings, the openai SDK's embeddings and images — all pointed
 * at the demo models. Each finishes, and each request it made is priced, charged once in the ledger
 * and recorded (`GET /v1/generation`).
 */

const NO_KEYS = {
  OPENAI_API_KEY: '',
  ANTHROPIC_API_KEY: '',
  GROQ_API_KEY: '',
  DEEPSEEK_API_KEY: '',
  COHERE_API_KEY: '',
};
const KEY = /gw_live_[A-Za-z0-9_-]{32}/g;
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** The example config's demo image price: $0.04 an image. */
const IMAGE_MICROS = 40_000;

let dir: string;
let server: CliProcess;
let url: string;
let key: string;
let accountId: string;
let storage: Storage;
let chargesSeen = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-demo-clients-'));
  const db = join(dir, 'tollgate.db');
  server = new CliProcess(
    ['serve', '--port', '0', '--host', '127.0.0.1', '--db', db, '--config', EXAMPLE_CONFIG],
    cliEnv(NO_KEYS),
  );
  [, url] = (await server.waitFor(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 'stderr')) as [string, string];
  await server.waitFor(/curl .*\/v1\/key.*\n/, 'stdout');
  for (const printed of new Set(server.stdout.match(KEY))) {
    if ((await call(url, '/v1/key', { key: printed })).body.data.scope === 'inference') key = printed;
  }
  storage = await openStorage(db);
  accountId = (await storage.findApiKeyByHash(await hashApiKey(key)))!.account.id;
});

afterAll(async () => {
  await server?.stop('SIGTERM');
  await storage?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/**
 * Waits for `count` new charge entries since the last call, and checks each: a positive amount,
 * a request whose record (`GET /v1/generation`) is a success on `model` at that very cost.
 */
async function expectNewCharges(count: number, model: string): Promise<LedgerEntry[]> {
  const fresh = await vi.waitFor(
    async () => {
      const entries = (await chargesOf(storage, accountId)).slice(chargesSeen);
      expect(entries).toHaveLength(count);
      return entries;
    },
    { timeout: 10_000, interval: 25 },
  );
  chargesSeen += count;
  for (const entry of fresh) {
    expect(entry.amountMicros).toBeLessThan(0);
    const record = await settledGeneration(url, key, entry.requestId!);
    expect(record).toMatchObject({
      model,
      provider: 'demo',
      status: 'success',
      cost_micros: -entry.amountMicros,
    });
  }
  return fresh;
}

const openai = () => new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0, timeout: 10_000 });
const aiProvider = () => createOpenAI({ baseURL: `${url}/v1`, apiKey: key });

describe('the example config offline: what a newcomer sees', () => {
  it('the banner offers the demo models by type, and not a local server that does not answer', async () => {
    const callable = server.stdout.slice(
      server.stdout.indexOf('Models you can call now:'),
      server.stdout.search(/Not answering now|Waiting for a provider key/),
    );
    for (const line of [
      /chat +demo\/chat-small, demo\/chat-large/,
      /embedding +demo\/embedding-small/,
      /image +demo\/image-small/,
      /rerank +demo\/rerank-small/,
    ]) {
      expect(callable).toMatch(line);
    }
    const ollama = await fetch('http://127.0.0.1:11434/v1/models').then(
      (r) => r.ok,
      () => false,
    );
    if (!ollama) {
      expect(callable).not.toContain('local/llama3.2');
      expect(server.stdout).toMatch(
        /Not answering now.*\n {2}local \(http:\/\/127\.0\.0\.1:11434\/v1\) +local\/llama3\.2/,
      );
    }
  });

  it('GET /v1/models shows each demo model with its type', async () => {
    const { body } = await call(url, '/v1/models');
    const demo = body.data
      .filter((m: { id: string }) => m.id.startsWith('demo/'))
      .map((m: { id: string; type: string; available: boolean }) => [m.id, m.type, m.available]);
    expect(demo).toEqual([
      ['demo/chat-small', 'chat', true],
      ['demo/chat-large', 'chat', true],
      ['demo/embedding-small', 'embedding', true],
      ['demo/image-small', 'image', true],
      ['demo/rerank-small', 'rerank', true],
    ]);
  });
});

describe('agent loops finish on the demo chat model', () => {
  const weatherParameters = {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  } as const;

  it.each([false, true])(
    "the openai SDK's runTools loop (stream: %s): a tool call, the tool runs, a final text using its result",
    async (stream) => {
      const asked: unknown[] = [];
      const runner = openai().chat.completions.runTools({
        model: 'demo/chat-small',
        messages: [{ role: 'user', content: 'What is the weather in Lyon?' }],
        stream,
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: weatherParameters,
              parse: JSON.parse,
              function: (args: { city: string }) => {
                asked.push(args);
                return { city: args.city, temperature_c: 21 };
              },
            },
          },
        ],
      } as never);
      const content = await runner.finalContent();
      expect(asked).toEqual([{ city: 'demo' }]);
      expect(content).toContain('get_weather returned');
      expect(content).toContain('temperature_c');
      expect(runner.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      await expectNewCharges(2, 'demo/chat-small');
    },
  );

  it("the AI SDK's generateText with tools and stopWhen: two steps, then a text; each step priced", async () => {
    const executed: unknown[] = [];
    const result = await generateText({
      model: aiProvider().chat('demo/chat-small'),
      prompt: 'What is the weather in Lyon?',
      tools: {
        get_weather: tool({
          description: 'The weather in a city',
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => {
            executed.push(city);
            return { city, temperature_c: 21 };
          },
        }),
      },
      stopWhen: stepCountIs(5),
      maxRetries: 0,
    });
    expect(executed).toEqual(['demo']);
    expect(result.steps.map((step) => step.finishReason)).toEqual(['tool-calls', 'stop']);
    expect(result.text).toContain('get_weather returned');
    for (const step of result.steps) {
      const body = step.response.body as { gateway: { cost_micros: number } };
      expect(body.gateway.cost_micros).toBeGreaterThan(0);
    }
    const charges = await expectNewCharges(2, 'demo/chat-small');
    expect(charges.map((c) => -c.amountMicros)).toEqual(
      result.steps.map(
        (step) => (step.response.body as { gateway: { cost_micros: number } }).gateway.cost_micros,
      ),
    );
  });

  it("the AI SDK's generateObject with a zod schema: an object the schema accepts, priced", async () => {
    const schema = z.object({
      name: z.string(),
      servings: z.number().int().positive(),
      ingredients: z.array(z.object({ item: z.string(), grams: z.number().min(1) })).min(1),
      difficulty: z.enum(['easy', 'medium', 'hard']),
      vegetarian: z.boolean(),
    });
    const result = await generateObject({
      model: aiProvider().chat('demo/chat-small'),
      schema,
      prompt: 'A pancake recipe',
      maxRetries: 0,
    });
    expect(schema.parse(result.object)).toEqual(result.object);
    expect(result.object.ingredients.length).toBeGreaterThan(0);
    const body = result.response.body as { gateway: { cost_micros: number } };
    expect(body.gateway.cost_micros).toBeGreaterThan(0);
    const [charge] = await expectNewCharges(1, 'demo/chat-small');
    expect(-charge!.amountMicros).toBe(body.gateway.cost_micros);
  });
});

describe('embeddings, images and rerank on the demo models', () => {
  it("LangChain's OpenAIEmbeddings: embedQuery and embedDocuments agree, each call priced", async () => {
    const embeddings = new OpenAIEmbeddings({
      model: 'demo/embedding-small',
      apiKey: key,
      configuration: { baseURL: `${url}/v1` },
      maxRetries: 0,
    });
    const query = await embeddings.embedQuery('hello');
    const documents = await embeddings.embedDocuments(['hello', 'Tollgate meters every call.']);
    expect(query).toHaveLength(256);
    expect(documents[0]).toEqual(query);
    expect(documents[1]).not.toEqual(query);
    await expectNewCharges(2, 'demo/embedding-small');
  });

  it("the openai SDK's embeddings.create: base64 by default and floats give the same vector; dimensions honoured", async () => {
    const client = openai();
    const { data, response } = await client.embeddings
      .create({ model: 'demo/embedding-small', input: ['a red fox', 'a blue whale'] })
      .withResponse();
    const floats = await client.embeddings.create({
      model: 'demo/embedding-small',
      input: ['a red fox', 'a blue whale'],
      encoding_format: 'float',
    });
    expect(data.data.map((d) => d.embedding)).toEqual(floats.data.map((d) => d.embedding));
    expect(data.usage.prompt_tokens).toBeGreaterThan(0);
    expect(Number(response.headers.get('x-gateway-cost-usd'))).toBeGreaterThan(0);
    const small = await client.embeddings.create({
      model: 'demo/embedding-small',
      input: 'hi',
      dimensions: 8,
    });
    expect(small.data[0]!.embedding).toHaveLength(8);
    await expectNewCharges(3, 'demo/embedding-small');
  });

  it("the AI SDK's embed: a vector and its usage, priced", async () => {
    const result = await embed({
      model: aiProvider().embedding('demo/embedding-small'),
      value: 'hello',
      maxRetries: 0,
    });
    expect(result.embedding).toHaveLength(256);
    expect(result.usage.tokens).toBe(2);
    await expectNewCharges(1, 'demo/embedding-small');
  });

  it("the openai SDK's images.generate: a PNG data: URL by default, n base64 PNGs when asked; n × the image price", async () => {
    const client = openai();
    const byUrl = await client.images.generate({ model: 'demo/image-small', prompt: 'a lighthouse' });
    const dataUrl = byUrl.data?.[0]?.url ?? '';
    expect(dataUrl).toMatch(/^data:image\/png;base64,/);
    const png = Buffer.from(dataUrl.slice(dataUrl.indexOf(',') + 1), 'base64');
    expect([...png.subarray(0, 8)]).toEqual(PNG_SIGNATURE);

    const b64 = await client.images.generate({
      model: 'demo/image-small',
      prompt: 'a lighthouse',
      n: 2,
      response_format: 'b64_json',
    });
    expect(b64.data).toHaveLength(2);
    for (const image of b64.data ?? []) {
      expect([...Buffer.from(image.b64_json ?? '', 'base64').subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    }
    expect(Buffer.from(b64.data![0]!.b64_json!, 'base64')).toEqual(png);
    const charges = await expectNewCharges(2, 'demo/image-small');
    expect(charges.map((c) => -c.amountMicros)).toEqual([IMAGE_MICROS, 2 * IMAGE_MICROS]);
  });

  it('POST /v1/rerank: documents ranked by the query words they share, one search unit charged', async () => {
    const response = await call(url, '/v1/rerank', {
      key,
      json: {
        model: 'demo/rerank-small',
        query: 'capital of France',
        documents: ['bananas are yellow', 'Paris is the capital of France', 'the capital of Spain'],
        top_n: 2,
        return_documents: true,
      },
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.results).toEqual([
      { index: 1, relevance_score: 1, document: { text: 'Paris is the capital of France' } },
      { index: 2, relevance_score: 0.6667, document: { text: 'the capital of Spain' } },
    ]);
    expect(response.body.usage).toEqual({ search_units: 1 });
    const [charge] = await expectNewCharges(1, 'demo/rerank-small');
    expect(-charge!.amountMicros).toBe(2_000);
  });
});
