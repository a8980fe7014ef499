import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { type GatewayConfig, parseGatewayConfig } from '@tollgate/core';
import { embed, embedMany, generateImage } from 'ai';
import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { chargesOf, getGeneration, usd6 } from './helpers/chat-wire.js';
import {
  DEFAULT_DIMENSIONS,
  embeddingFor,
  IMAGES_CREATED,
  imageBytes,
  imageUrl,
  OpenAIEmbeddingsUpstream,
  tokensOf,
} from './helpers/embeddings-upstream.js';
import { REQUEST_ID } from './helpers/http.js';
import { describeOnEachVariant, type E2eGateway, startE2eGateway } from './helpers/start-e2e-gateway.js';
import type { StorageVariant } from './helpers/storage-variants.js';
import type { Tenant } from './helpers/tenant.js';

/**
 * Real clients, unchanged, against the real Node server: the official `openai` SDK, the Vercel AI
 * SDK (`@ai-sdk/openai`) and LangChain (`@langchain/openai`), each pointed at the gateway's `/v1`
 * with an inference key, calling `POST /v1/embeddings` and `POST /v1/images/generations` on models
 * routed to an OpenAI-format upstream (a loopback server computing OpenAI's answers). Each test
 * checks what the client returned and that the gateway charged exactly what product.md says.
 */

const EMBED_MODEL = 'acme/embed-small';
const EMBED_UPSTREAM_MODEL = 'text-embedding-3-small';
const IMAGE_MODEL = 'acme/image-gen';
const IMAGE_UPSTREAM_MODEL = 'dall-e-2';
const UPSTREAM_KEY = 'sk-openai-sdk-e2e-upstream';
/** The tenant's starting credit (the `createTenant` default): $10. */
const CREDIT = 10_000_000;
/** `image` price 0.04 USD per image, in micros. */
const IMAGE_MICROS = 40_000;

/** `prompt` price 0.02 USD per million tokens = 20,000 micros per million: ⌈tokens × 0.02⌉ micros. */
function embeddingMicros(tokens: number): number {
  return Math.ceil((tokens * 20_000) / 1_000_000);
}

function sdkConfig(upstreamUrl: string): GatewayConfig {
  return parseGatewayConfig({
    providers: {
      openai: { format: 'openai', base_url: `${upstreamUrl}/v1`, api_key: UPSTREAM_KEY },
    },
    models: [
      {
        id: EMBED_MODEL,
        name: 'Acme Embed Small',
        type: 'embedding',
        endpoints: [
          { provider: 'openai', upstream_model: EMBED_UPSTREAM_MODEL, pricing: { prompt: '0.02' } },
        ],
      },
      {
        id: IMAGE_MODEL,
        name: 'Acme Image Gen',
        type: 'image',
        endpoints: [{ provider: 'openai', upstream_model: IMAGE_UPSTREAM_MODEL, pricing: { image: '0.04' } }],
      },
    ],
  });
}

type SdkGateway = E2eGateway & { upstream: OpenAIEmbeddingsUpstream };

/** The real Node server on `variant`'s storage, routing both models to an `OpenAIEmbeddingsUpstream`. */
async function startSdkGateway(variant: StorageVariant): Promise<SdkGateway> {
  const upstream = await new OpenAIEmbeddingsUpstream().start();
  let e2e: E2eGateway;
  try {
    e2e = await startE2eGateway({
      config: () => sdkConfig(upstream.url),
      open: () => variant.open(),
      undici: true,
    });
  } catch (error) {
    await upstream.stop();
    throw error;
  }
  const closeGateway = e2e.close;
  return Object.assign(e2e, {
    upstream,
    async close() {
      try {
        await closeGateway();
      } finally {
        await upstream.stop();
      }
    },
  });
}

// biome-ignore lint/suspicious/noExplicitAny: the gateway object is not in the SDKs' types.
type WithGateway<T> = T & { gateway: any };

/**
 * Asserts the tenant's account was charged exactly `charges` — one `charge` ledger entry per
 * request, in order, the balance down by their sum — and that `GET /v1/generation` of each charged
 * request says the same cost on `model`. Returns the charged request ids.
 */
async function expectCharges(
  g: SdkGateway,
  tenant: Tenant,
  model: string,
  charges: { micros: number; promptTokens?: number }[],
): Promise<string[]> {
  const entries = await chargesOf(g.storage, tenant.account.id);
  expect(
    entries.map((entry) => -entry.amountMicros),
    'one charge per request',
  ).toEqual(charges.map((c) => c.micros));
  const total = charges.reduce((sum, c) => sum + c.micros, 0);
  const account = await g.storage.getAccount(tenant.account.id);
  expect(account?.balanceMicros, 'the balance went down by the exact charge').toBe(CREDIT - total);
  const ids: string[] = [];
  for (const [i, entry] of entries.entries()) {
    const requestId = entry.requestId ?? '';
    expect(requestId).toMatch(REQUEST_ID);
    expect(entry.description).toContain(model);
    const generation = await getGeneration(g.url, tenant.inferenceKey, requestId);
    expect(generation.status, generation.text).toBe(200);
    expect(generation.body.data).toMatchObject({
      id: requestId,
      model,
      provider: 'openai',
      status: 'success',
      cost_micros: charges[i]!.micros,
      ...(charges[i]!.promptTokens !== undefined && {
        usage: expect.objectContaining({ prompt_tokens: charges[i]!.promptTokens }),
      }),
    });
    ids.push(requestId);
  }
  return ids;
}

/** Asserts `g.upstream` received exactly these embeddings calls, with the upstream model and the provider's key. */
function expectUpstreamEmbeddings(g: SdkGateway, tenant: Tenant, bodies: Record<string, unknown>[]): void {
  expect(g.upstream.received.map((r) => `${r.method} ${r.path}`)).toEqual(
    bodies.map(() => 'POST /v1/embeddings'),
  );
  for (const [i, request] of g.upstream.received.entries()) {
    expect(request.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(request)).not.toContain(tenant.inferenceKey);
    expect(request.body).toMatchObject({ model: EMBED_UPSTREAM_MODEL, ...bodies[i] });
  }
}

// Inputs of the multi-input tests: 11 + 7 + 1,500 = 1,518 tokens → 30.36 → 31 micros.
const DOCUMENTS = [
  'The quick brown fox jumps over the lazy dog.',
  'Tollgate meters every call.',
  'lorem ipsum '.repeat(500),
];
const DOCUMENT_TOKENS = 1_518;
const DOCUMENT_MICROS = 31;
const HELLO_TOKENS = 2; // ⌈5 / 4⌉
const HELLO_MICROS = 1; // 2 × 0.02 = 0.04 → rounded up to 1

describeOnEachVariant(
  'real SDK clients on /v1/embeddings and /v1/images/generations',
  startSdkGateway,
  (gw) => {
    it('the test inputs cost what the comments say', () => {
      expect(DOCUMENTS.map(tokensOf).reduce((a, b) => a + b)).toBe(DOCUMENT_TOKENS);
      expect(embeddingMicros(DOCUMENT_TOKENS)).toBe(DOCUMENT_MICROS);
      expect(tokensOf('hello')).toBe(HELLO_TOKENS);
      expect(embeddingMicros(HELLO_TOKENS)).toBe(HELLO_MICROS);
    });

    describe('the official openai SDK (6.49.0)', () => {
      it("embeddings.create({input: 'hello'}): the SDK's default base64 path decodes the upstream's vector; usage, gateway object, charge", async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const { data, response } = await g
          .client(tenant.inferenceKey)
          .embeddings.create({ model: EMBED_MODEL, input: 'hello' })
          .withResponse();
        const result = data as WithGateway<typeof data>;

        expect(result.object).toBe('list');
        expect(result.data).toHaveLength(1);
        expect(result.data[0]).toEqual({ object: 'embedding', index: 0, embedding: embeddingFor('hello') });
        expect(result.data[0]!.embedding).toHaveLength(DEFAULT_DIMENSIONS);
        expect(result.model).toBe(EMBED_MODEL);
        expect(result.usage).toEqual({ prompt_tokens: HELLO_TOKENS, total_tokens: HELLO_TOKENS });
        expect(result.gateway).toMatchObject({
          request_id: expect.stringMatching(REQUEST_ID),
          cost_micros: HELLO_MICROS,
          cost_usd: 0.000001,
          model: EMBED_MODEL,
          provider: 'openai',
          attempts: 1,
        });
        expect(response.headers.get('x-gateway-cost-usd')).toBe(usd6(HELLO_MICROS));
        expect(response.headers.get('x-gateway-request-id')).toBe(result.gateway.request_id);

        // The SDK asked for base64 on its own; the gateway passed that through.
        expectUpstreamEmbeddings(g, tenant, [{ input: 'hello', encoding_format: 'base64' }]);
        const [charged] = await expectCharges(g, tenant, EMBED_MODEL, [
          { micros: HELLO_MICROS, promptTokens: HELLO_TOKENS },
        ]);
        expect(charged).toBe(result.gateway.request_id);
      });

      it('embeddings.create with an array of inputs: one vector per input in order, usage summed, charged once', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const { data, response } = await g
          .client(tenant.inferenceKey)
          .embeddings.create({ model: EMBED_MODEL, input: DOCUMENTS })
          .withResponse();
        const result = data as WithGateway<typeof data>;

        expect(result.data).toEqual(
          DOCUMENTS.map((text, index) => ({ object: 'embedding', index, embedding: embeddingFor(text) })),
        );
        expect(result.usage).toEqual({ prompt_tokens: DOCUMENT_TOKENS, total_tokens: DOCUMENT_TOKENS });
        expect(result.gateway.cost_micros).toBe(DOCUMENT_MICROS);
        expect(response.headers.get('x-gateway-cost-usd')).toBe(usd6(DOCUMENT_MICROS));

        expectUpstreamEmbeddings(g, tenant, [{ input: DOCUMENTS, encoding_format: 'base64' }]);
        const [charged] = await expectCharges(g, tenant, EMBED_MODEL, [
          { micros: DOCUMENT_MICROS, promptTokens: DOCUMENT_TOKENS },
        ]);
        expect(charged).toBe(result.gateway.request_id);
      });

      it("embeddings.create with encoding_format 'float' and dimensions: passed through, float vectors returned as sent", async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const result = (await g.client(tenant.inferenceKey).embeddings.create({
          model: EMBED_MODEL,
          input: ['alpha', 'beta'],
          encoding_format: 'float',
          dimensions: 4,
        })) as WithGateway<OpenAI.CreateEmbeddingResponse>;

        expect(result.data.map((d) => d.embedding)).toEqual([
          embeddingFor('alpha', 4),
          embeddingFor('beta', 4),
        ]);
        expect(result.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
        expectUpstreamEmbeddings(g, tenant, [
          { input: ['alpha', 'beta'], encoding_format: 'float', dimensions: 4 },
        ]);
        await expectCharges(g, tenant, EMBED_MODEL, [{ micros: 1, promptTokens: 3 }]);
      });

      it('images.generate({n: 2}): two image URLs, charged 2 × the image price', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const prompt = 'a lighthouse at dusk, watercolour';
        const { data, response } = await g
          .client(tenant.inferenceKey)
          .images.generate({ model: IMAGE_MODEL, prompt, n: 2 })
          .withResponse();
        const result = data as WithGateway<typeof data>;

        expect(result.created).toBe(IMAGES_CREATED);
        expect(result.data).toEqual([
          { url: imageUrl(0), revised_prompt: prompt },
          { url: imageUrl(1), revised_prompt: prompt },
        ]);
        expect(result.gateway).toMatchObject({
          request_id: expect.stringMatching(REQUEST_ID),
          cost_micros: 2 * IMAGE_MICROS,
          cost_usd: 0.08,
          model: IMAGE_MODEL,
          provider: 'openai',
          attempts: 1,
        });
        expect(response.headers.get('x-gateway-cost-usd')).toBe('0.080000');

        expect(g.upstream.received).toHaveLength(1);
        const upstream = g.upstream.received[0]!;
        expect(`${upstream.method} ${upstream.path}`).toBe('POST /v1/images/generations');
        expect(upstream.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
        expect(upstream.body).toEqual({ model: IMAGE_UPSTREAM_MODEL, prompt, n: 2 });
        const [charged] = await expectCharges(g, tenant, IMAGE_MODEL, [{ micros: 2 * IMAGE_MICROS }]);
        expect(charged).toBe(result.gateway.request_id);
      });

      it("images.generate({response_format: 'b64_json'}): the image bytes come back as sent, charged one image", async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const prompt = 'a red bicycle';
        const result = (await g.client(tenant.inferenceKey).images.generate({
          model: IMAGE_MODEL,
          prompt,
          response_format: 'b64_json',
          size: '256x256',
        })) as WithGateway<OpenAI.ImagesResponse>;

        expect(result.data).toHaveLength(1);
        expect(Buffer.from(result.data?.[0]?.b64_json ?? '', 'base64')).toEqual(imageBytes(prompt, 0));
        expect(result.gateway.cost_micros).toBe(IMAGE_MICROS);
        expect(g.upstream.received[0]!.body).toEqual({
          model: IMAGE_UPSTREAM_MODEL,
          prompt,
          response_format: 'b64_json',
          size: '256x256',
        });
        await expectCharges(g, tenant, IMAGE_MODEL, [{ micros: IMAGE_MICROS }]);
      });
    });

    describe('the Vercel AI SDK (ai + @ai-sdk/openai)', () => {
      const provider = (apiKey: string) => createOpenAI({ baseURL: `${gw().url}/v1`, apiKey });

      it("embed({value: 'hello'}): the vector, the token usage, the gateway's headers; charged", async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const result = await embed({
          model: provider(tenant.inferenceKey).embedding(EMBED_MODEL),
          value: 'hello',
          maxRetries: 0,
        });

        expect(result.embedding).toEqual(embeddingFor('hello'));
        expect(result.usage).toEqual({ tokens: HELLO_TOKENS });
        const headers = result.response?.headers ?? {};
        expect(headers['x-gateway-cost-usd']).toBe(usd6(HELLO_MICROS));
        const body = result.response?.body as WithGateway<object>;
        expect(body.gateway).toMatchObject({ cost_micros: HELLO_MICROS, model: EMBED_MODEL });

        // The AI SDK asks for float vectors.
        expectUpstreamEmbeddings(g, tenant, [{ input: ['hello'], encoding_format: 'float' }]);
        const [charged] = await expectCharges(g, tenant, EMBED_MODEL, [
          { micros: HELLO_MICROS, promptTokens: HELLO_TOKENS },
        ]);
        expect(headers['x-gateway-request-id']).toBe(charged);
      });

      it('embedMany: one vector per value in order, the usage summed, one request charged once', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const result = await embedMany({
          model: provider(tenant.inferenceKey).textEmbeddingModel(EMBED_MODEL),
          values: DOCUMENTS,
          maxRetries: 0,
        });

        expect(result.values).toEqual(DOCUMENTS);
        expect(result.embeddings).toEqual(DOCUMENTS.map((text) => embeddingFor(text)));
        expect(result.usage).toEqual({ tokens: DOCUMENT_TOKENS });
        expect(result.responses).toHaveLength(1);

        expectUpstreamEmbeddings(g, tenant, [{ input: DOCUMENTS, encoding_format: 'float' }]);
        const [charged] = await expectCharges(g, tenant, EMBED_MODEL, [
          { micros: DOCUMENT_MICROS, promptTokens: DOCUMENT_TOKENS },
        ]);
        expect(result.responses?.[0]?.headers?.['x-gateway-request-id']).toBe(charged);
      });

      it('generateImage({n: 2}): two images decoded from b64_json, charged 2 × the image price', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const prompt = 'a paper crane';
        const result = await generateImage({
          model: provider(tenant.inferenceKey).image(IMAGE_MODEL),
          prompt,
          n: 2,
          // The AI SDK knows OpenAI's own model ids only; for others it assumes one image per call.
          maxImagesPerCall: 2,
          maxRetries: 0,
        });

        expect(result.images.map((image) => Buffer.from(image.uint8Array))).toEqual([
          imageBytes(prompt, 0),
          imageBytes(prompt, 1),
        ]);
        expect(g.upstream.received).toHaveLength(1);
        expect(g.upstream.received[0]!.body).toMatchObject({
          model: IMAGE_UPSTREAM_MODEL,
          prompt,
          n: 2,
          response_format: 'b64_json',
        });
        await expectCharges(g, tenant, IMAGE_MODEL, [{ micros: 2 * IMAGE_MICROS }]);
      });
    });

    describe("LangChain's OpenAIEmbeddings (@langchain/openai)", () => {
      const embeddings = (apiKey: string) =>
        new OpenAIEmbeddings({
          model: EMBED_MODEL,
          apiKey,
          configuration: { baseURL: `${gw().url}/v1` },
          maxRetries: 0,
        });

      it("embedQuery('hello'): the vector (through the openai SDK's base64 path); charged", async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const vector = await embeddings(tenant.inferenceKey).embedQuery('hello');

        expect(vector).toEqual(embeddingFor('hello'));
        expectUpstreamEmbeddings(g, tenant, [{ input: 'hello', encoding_format: 'base64' }]);
        await expectCharges(g, tenant, EMBED_MODEL, [{ micros: HELLO_MICROS, promptTokens: HELLO_TOKENS }]);
      });

      it('embedDocuments: one vector per document in order; one request charged once', async () => {
        const g = gw();
        const tenant = await g.newTenant();
        const vectors = await embeddings(tenant.inferenceKey).embedDocuments(DOCUMENTS);

        expect(vectors).toEqual(DOCUMENTS.map((text) => embeddingFor(text)));
        expectUpstreamEmbeddings(g, tenant, [{ input: DOCUMENTS, encoding_format: 'base64' }]);
        await expectCharges(g, tenant, EMBED_MODEL, [
          { micros: DOCUMENT_MICROS, promptTokens: DOCUMENT_TOKENS },
        ]);
      });
    });
  },
  (g) => g.upstream.reset(),
);
