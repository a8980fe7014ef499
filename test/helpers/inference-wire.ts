import type { Gateway, GatewayConfig, GatewayOptions, LedgerEntry, Storage } from '@tollgate/core';
import type { FakeUpstream, UpstreamCall as FakeUpstreamCall, TestGateway } from '@tollgate/testing';
import { expect } from 'vitest';
import { describeOnEachVariant, startGatewayUnderTest } from './gateway-under-test.js';
import type { InstantClock } from './instant-clock.js';
import { openAiCompletion, openAiStreamEvents, type ReplyContent } from './records-wire.js';
import { type OpenedStorage, type StorageVariant, storageVariantsWithPglite } from './storage-variants.js';
import { createTenant, type Tenant, type TenantOptions } from './tenant.js';
import { testConfig } from './test-config.js';
import { readFixture } from './wire-fixtures.js';

// biome-ignore lint/suspicious/noExplicitAny: answers and upstream bodies are read as plain JSON.
export type Json = any;

/*
 * Upstream answers and a scripted upstream for the non-chat inference endpoints (embeddings, image
 * generation, rerank), and the gateway they are tested through: the testing kit's
 * `createTestGateway` on each storage (SQLite, PGlite, and Postgres when `TEST_DATABASE_URL` is
 * set) and on real time, its `fetch(new Request(...))` as the whole service, every provider's
 * fake answered from what the test scripts here.
 */

// ---------------------------------------------------------------------------------------------
// Upstream answers, built on the recorded / reference bodies of test/fixtures/wire.

const fixture = (name: string): Json => JSON.parse(readFixture(name));

/**
 * OpenAI's embeddings answer (`openai-embeddings.json`, or `openai-embeddings-base64.json` for
 * `encoding_format: "base64"`): the fixture's vector once per input, `usage` as given (default: the
 * fixture's 8 tokens), or no `usage` at all when `promptTokens` is `null`.
 */
export function embeddingsAnswer(
  options: { inputs?: number; promptTokens?: number | null; base64?: boolean } = {},
) {
  const answer = fixture(options.base64 ? 'openai-embeddings-base64.json' : 'openai-embeddings.json');
  const item = answer.data[0];
  answer.data = Array.from({ length: options.inputs ?? 1 }, (_, index) => ({ ...item, index }));
  if (options.promptTokens === null) delete answer.usage;
  else if (options.promptTokens !== undefined)
    answer.usage = { prompt_tokens: options.promptTokens, total_tokens: options.promptTokens };
  return answer;
}

/** The two embeddings fixtures as recorded (for "returned as the upstream sent it"). */
export const EMBEDDINGS_FIXTURE = fixture('openai-embeddings.json');
export const EMBEDDINGS_BASE64_FIXTURE = fixture('openai-embeddings-base64.json');

/**
 * OpenAI's image answer with `images` items: `openai-images-url.json` (dall-e, `{url}` items) or,
 * for `b64`, `openai-images-b64.json` (GPT image: `b64_json`, `usage`, `size`, …).
 */
export function imagesAnswer(images: number, options: { b64?: boolean } = {}) {
  const answer = fixture(options.b64 ? 'openai-images-b64.json' : 'openai-images-url.json');
  const items: Json[] = answer.data;
  answer.data = Array.from({ length: images }, (_, i) => ({ ...items[i % items.length] }));
  return answer;
}

/**
 * Cohere v2's rerank answer (`cohere-rerank-v2.json`: indexes 3, 4, 0 best first, 1 search unit
 * billed), with other `results` or billed units when given (`searchUnits: null` drops `billed_units`).
 */
export function cohereRerankAnswer(
  options: { results?: { index: number; relevance_score: number }[]; searchUnits?: number | null } = {},
) {
  const answer = fixture('cohere-rerank-v2.json');
  if (options.results) answer.results = options.results;
  if (options.searchUnits === null) delete answer.meta.billed_units;
  else if (options.searchUnits !== undefined) answer.meta.billed_units.search_units = options.searchUnits;
  return answer;
}

/** The recorded Cohere rerank fixture, as is. */
export const COHERE_RERANK_FIXTURE = fixture('cohere-rerank-v2.json');

/**
 * Jina's (and vLLM's) rerank answer (`jina-rerank.json`: indexes 0 and 2 with their `document`,
 * `usage: {total_tokens}` only, no `id`), with other `results` when given.
 */
export function jinaRerankAnswer(options: { results?: { index: number; relevance_score: number }[] } = {}) {
  const answer = fixture('jina-rerank.json');
  if (options.results) answer.results = options.results;
  return answer;
}

/** The recorded Jina rerank fixture, as is. */
export const JINA_RERANK_FIXTURE = fixture('jina-rerank.json');

/** An OpenAI-style error answer. */
export function openAIError(status: number, message = 'The server is overloaded.') {
  return json({ error: { message, type: status >= 500 ? 'server_error' : 'invalid_request_error' } }, status);
}

/** Cohere's 400 (`cohere-error-400.json`: `{message}`). */
export function cohereError400(): Response {
  return new Response(readFixture('cohere-error-400.json'), {
    status: 400,
    headers: { 'content-type': 'application/json' },
  });
}

/** What a chat model answers when the test scripts nothing: 12 prompt and 5 completion tokens. */
export const DEFAULT_CHAT_REPLY: ReplyContent = {
  text: 'Hello from upstream.',
  usage: { prompt: 12, completion: 5 },
};

/** OpenAI's streamed chat answer (the recorded event shapes) as an SSE response. */
export function chatStreamAnswer(content: ReplyContent): Response {
  return new Response(openAiStreamEvents(content).join(''), {
    headers: { 'content-type': 'text/event-stream' },
  });
}

/** A JSON answer. */
export function json(body: unknown, status = 200): Response {
  return Response.json(body, { status });
}

// ---------------------------------------------------------------------------------------------
// The scripted upstream.

/** One request the gateway sent upstream. */
export interface UpstreamCall {
  url: string;
  /** The provider (its name in the config) whose `base_url` the request went to. */
  provider: string;
  /** The path after the provider's base URL (`/embeddings`, `/images/generations`, `/rerank`). */
  path: string;
  headers: Record<string, string>;
  body: Json;
}

export type UpstreamReply = Response | Json | ((call: UpstreamCall) => Response | Json);

/**
 * What every provider's fake upstream of the gateway under test answers. Each provider takes its
 * scripted replies in order (`on`); once they are used up, it answers with the fixture for the path
 * it was called on: embeddings (one vector per input), images (`n` of them, `b64_json` when asked)
 * and rerank (Cohere's v2 answer on a `cohere` provider, Jina's elsewhere, each cut to the indexes
 * the request has).
 */
export class ScriptedUpstream {
  readonly calls: UpstreamCall[] = [];
  private readonly scripts = new Map<string, UpstreamReply[]>();
  private readonly fakes: FakeUpstream[] = [];
  /** The holds in force, each with its release. */
  private readonly holds = new Map<Promise<void>, () => void>();

  constructor(private readonly config: GatewayConfig) {}

  /** Replies `provider` gives to its next calls, in order (a plain object is sent as 200 JSON). */
  on(provider: string, ...replies: UpstreamReply[]): this {
    this.scripts.set(provider, [...(this.scripts.get(provider) ?? []), ...replies]);
    return this;
  }

  /** Forgets calls and unused scripts (before each test). */
  reset(): void {
    this.calls.length = 0;
    this.scripts.clear();
  }

  /** Calls sent to one provider. */
  callsTo(provider: string): UpstreamCall[] {
    return this.calls.filter((c) => c.provider === provider);
  }

  /** Answers every fake upstream of `kit` from here (its calls recorded here, in order). */
  serve(kit: TestGateway<InstantClock>): void {
    for (const [provider, settings] of Object.entries(this.config.providers)) {
      if (!('base_url' in settings)) continue;
      const basePath = new URL(settings.base_url).pathname.replace(/\/$/, '');
      const fake = kit.upstream(provider);
      fake.always((self, call) => self.reply(this.answer(provider, basePath, call)));
      this.fakes.push(fake);
    }
    this.applyHolds();
  }

  /**
   * Holds every answer (the call is recorded in `calls` at once, its answer is given to the
   * gateway only on release) until the returned function is called.
   */
  hold(): () => void {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    this.holds.set(held, release);
    this.applyHolds();
    return () => {
      this.holds.delete(held);
      this.applyHolds();
      release();
    };
  }

  /** Releases every hold (before closing). */
  releaseHolds(): void {
    const releases = [...this.holds.values()];
    this.holds.clear();
    this.applyHolds();
    for (const release of releases) release();
  }

  private applyHolds(): void {
    const gate = this.holds.size > 0 ? Promise.all(this.holds.keys()) : null;
    for (const fake of this.fakes) fake.holdUntil(gate);
  }

  private answer(provider: string, basePath: string, sent: FakeUpstreamCall): Response {
    const call: UpstreamCall = {
      url: sent.url,
      provider,
      path: new URL(sent.url).pathname.slice(basePath.length),
      headers: Object.fromEntries(new Headers(sent.headers).entries()),
      body: sent.body ?? null,
    };
    this.calls.push(call);
    const reply = this.scripts.get(provider)?.shift() ?? ((c: UpstreamCall) => this.defaultAnswer(c));
    const answer = typeof reply === 'function' ? reply(call) : reply;
    return answer instanceof Response ? answer : json(answer);
  }

  private defaultAnswer(call: UpstreamCall): Response | Json {
    const { body } = call;
    if (call.path === '/embeddings') {
      const inputs =
        typeof body.input === 'string' || typeof body.input[0] === 'number' ? 1 : body.input.length;
      return embeddingsAnswer({ inputs, base64: body.encoding_format === 'base64' });
    }
    if (call.path === '/images/generations') {
      return imagesAnswer(body.n ?? 1, { b64: body.response_format === 'b64_json' });
    }
    if (call.path === '/chat/completions') {
      return body.stream ? chatStreamAnswer(DEFAULT_CHAT_REPLY) : openAiCompletion(DEFAULT_CHAT_REPLY);
    }
    if (call.path === '/rerank') {
      const documents = body.documents.length as number;
      const cohere = this.config.providers[call.provider]?.format === 'cohere';
      const answer = cohere ? cohereRerankAnswer() : jinaRerankAnswer();
      answer.results = answer.results.filter((r: Json) => r.index < documents);
      if (answer.results.length === 0) answer.results = [{ index: 0, relevance_score: 0.5 }];
      return answer;
    }
    return openAIError(404, `Unknown request URL: POST ${call.path}.`);
  }
}

// ---------------------------------------------------------------------------------------------
// The catalogue and the gateway under test.

/** Per-unit prices of the catalogue below, in micros (for the expected costs). */
export const PRICES = {
  /** Per million tokens. */
  embedP1: 20_000,
  embedP2: 50_000,
  /** Per image. */
  imageP1: 40_000,
  imageP2: 50_000,
  /** Per search unit. */
  rerankCohere: 2_000,
  rerankJinaP2: 2_500,
  rerankJinaP1: 1_000,
} as const;

/** `limits.max_request_mb` of the config below. */
export const MAX_REQUEST_MB = 1;

/**
 * Three providers (`p1`, `p2` OpenAI-format; `co` Cohere), a chat model and models of each new type:
 * - `acme/embed` (p1 0.02, p2 0.05 per M tokens), `acme/embed-solo` (p2 only), `acme/embed-free` (p1, 0);
 * - `acme/image` (p1 0.04, p2 0.05 per image);
 * - `acme/rerank` (co 0.002, then p2 in the Jina shape 0.0025 per search unit), `acme/rerank-jina` (p1, 0.001);
 * - `acme/image-dear-first`, `acme/rerank-dear-first`: the same two routes, the dearer one listed first.
 */
export const inferenceConfig: GatewayConfig = testConfig({
  providers: {
    p1: { format: 'openai', base_url: 'http://upstream.test/p1/v1', api_key: 'sk-p1' },
    p2: { format: 'openai', base_url: 'http://upstream.test/p2/v1', api_key: 'sk-p2' },
    co: { format: 'cohere', base_url: 'http://upstream.test/co/v2', api_key: 'sk-co' },
  },
  models: [
    {
      id: 'acme/chat',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'p1', upstream_model: 'gpt-4o-mini', pricing: { prompt: '1', completion: '2' } },
      ],
    },
    {
      id: 'acme/embed',
      type: 'embedding',
      endpoints: [
        { provider: 'p1', upstream_model: 'text-embedding-3-small', pricing: { prompt: '0.02' } },
        { provider: 'p2', upstream_model: 'embed-mirror', pricing: { prompt: '0.05' } },
      ],
    },
    {
      id: 'acme/embed-solo',
      type: 'embedding',
      endpoints: [{ provider: 'p2', upstream_model: 'embed-solo-1', pricing: { prompt: '0.05' } }],
    },
    {
      id: 'acme/embed-free',
      type: 'embedding',
      endpoints: [{ provider: 'p1', upstream_model: 'embed-free-1', pricing: { prompt: '0' } }],
    },
    {
      id: 'acme/image',
      type: 'image',
      endpoints: [
        { provider: 'p1', upstream_model: 'dall-e-3', pricing: { image: '0.04' } },
        { provider: 'p2', upstream_model: 'image-mirror', pricing: { image: '0.05' } },
      ],
    },
    {
      id: 'acme/rerank',
      type: 'rerank',
      endpoints: [
        { provider: 'co', upstream_model: 'rerank-v3.5', pricing: { search: '0.002' } },
        {
          provider: 'p2',
          upstream_model: 'jina-reranker-v2-base-multilingual',
          pricing: { search: '0.0025' },
        },
      ],
    },
    // The dearer route listed first, for `provider.sort: "price"`.
    {
      id: 'acme/image-dear-first',
      type: 'image',
      endpoints: [
        { provider: 'p2', upstream_model: 'image-mirror', pricing: { image: '0.05' } },
        { provider: 'p1', upstream_model: 'dall-e-3', pricing: { image: '0.04' } },
      ],
    },
    {
      id: 'acme/rerank-dear-first',
      type: 'rerank',
      endpoints: [
        {
          provider: 'p2',
          upstream_model: 'jina-reranker-v2-base-multilingual',
          pricing: { search: '0.0025' },
        },
        { provider: 'co', upstream_model: 'rerank-v3.5', pricing: { search: '0.002' } },
      ],
    },
    {
      id: 'acme/rerank-jina',
      type: 'rerank',
      endpoints: [
        {
          provider: 'p1',
          upstream_model: 'jina-reranker-v2-base-multilingual',
          pricing: { search: '0.001' },
        },
      ],
    },
  ],
  limits: { max_request_mb: MAX_REQUEST_MB },
});

/** The gateway in-process over one storage, with its scripted upstream and request helpers. */
export interface InferenceGateway {
  /** The testing kit's gateway it is built on. */
  kit: TestGateway<InstantClock>;
  gateway: Gateway;
  storage: Storage;
  upstream: ScriptedUpstream;
  /** The gateway's clock (real time unless a test shifts or freezes it). */
  clock: InstantClock;
  /** A fresh account (default $10 credit, no fee) with an inference key. */
  newTenant(creditMicros?: number, options?: Omit<TenantOptions, 'creditMicros'>): Promise<Tenant>;
  /** `POST <path>` with the key; a string body is sent as is. */
  post(path: string, body: unknown, key: string, headers?: Record<string, string>): Promise<Response>;
  /** `GET <path>` with the key (none when `null`). */
  get(path: string, key: string | null): Promise<Response>;
  /** `GET /v1/generation?id=…`: the record's `data`. */
  generation(requestId: string, key: string): Promise<Json>;
  /** The account's `charge` ledger entries. */
  charges(accountId: string): Promise<LedgerEntry[]>;
  balance(accountId: string): Promise<number>;
  close(): Promise<void>;
}

/**
 * The kit's gateway on `storage` and `clock` with one attempt per route, every fake upstream
 * answered by `upstream` (several gateways can share one store, clock and upstream).
 */
export async function startKitGateway(
  storage: Storage,
  config: GatewayConfig,
  upstream: ScriptedUpstream,
  clock: InstantClock,
  options: InferenceGatewayOptions = {},
): Promise<TestGateway<InstantClock>> {
  const gw = await startGatewayUnderTest({
    config,
    upstream: 'kit',
    storage,
    clock,
    gateway: { attemptsPerRoute: 1, ...options },
  });
  upstream.serve(gw.kit!);
  return gw.kit!;
}

/** More options of the gateway under test (the kit sets the HTTP client and the clock). */
export type InferenceGatewayOptions = Omit<GatewayOptions, 'httpClient' | 'clock'>;

/**
 * Starts the kit's gateway on `opened` with the config above (size cap as `tollgate serve` sets
 * it), one attempt per route, on real time (`InstantClock`: waits recorded, not slept).
 */
export async function startInferenceGateway(
  opened: OpenedStorage,
  config = inferenceConfig,
  options: InferenceGatewayOptions = {},
): Promise<InferenceGateway> {
  const upstream = new ScriptedUpstream(config);
  const gw = await startGatewayUnderTest({
    config,
    upstream: 'kit',
    open: async () => opened,
    gateway: { attemptsPerRoute: 1, ...options },
  });
  const kit = gw.kit!;
  upstream.serve(kit);
  const { gateway, storage, clock } = gw;
  const get = (path: string, key: string | null) =>
    gw.fetch(`${gw.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return {
    kit,
    gateway,
    storage,
    upstream,
    clock,
    newTenant: (creditMicros = 10_000_000, options = {}) =>
      createTenant(storage, { ...options, creditMicros }),
    post: (path, body, key, headers = {}) =>
      gw.fetch(`${gw.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    get,
    async generation(requestId, key) {
      const response = await get(`/v1/generation?id=${encodeURIComponent(requestId)}`, key);
      expect(response.status).toBe(200);
      return ((await response.json()) as Json).data;
    },
    charges: async (accountId) =>
      (await storage.listLedgerEntries(accountId)).filter((e) => e.kind === 'charge'),
    balance: async (accountId) => (await storage.getAccount(accountId))!.balanceMicros,
    close: () => gw.close(),
  };
}

/**
 * Declares `body` once per storage variant, each with its own gateway (started before the first
 * test, closed after the last) and the upstream's calls and scripts reset before every test.
 */
export function describeOnEachInferenceStorage(
  title: string,
  body: (gw: () => InferenceGateway, variant: StorageVariant) => void,
  config: GatewayConfig = inferenceConfig,
): void {
  describeOnEachVariant(
    title,
    storageVariantsWithPglite,
    async (variant) => startInferenceGateway(await variant.open(), config),
    body,
    (gw) => gw.upstream.reset(),
  );
}

// ---------------------------------------------------------------------------------------------
// What every answer and every refusal must leave behind.

/** The request id of an answer. */
export const requestIdOf = (response: Response): string => response.headers.get('x-gateway-request-id')!;

/**
 * A served request charged exactly `costMicros`: the `gateway` object and `X-Gateway-Cost-Usd`
 * say so, one `charge` ledger entry of that amount names the request, the balance fell by exactly
 * it, and the record is a success with that cost. Returns the answer and the record.
 */
export async function expectCharged(
  gw: InferenceGateway,
  tenant: Tenant,
  response: Response,
  expected: { costMicros: number; costUsd: string; model: string; provider: string; attempts?: number },
): Promise<{ body: Json; record: Json }> {
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(200);
  const requestId = requestIdOf(response);
  expect(response.headers.get('x-gateway-cost-usd')).toBe(expected.costUsd);
  expect(body.gateway).toMatchObject({
    request_id: requestId,
    cost_micros: expected.costMicros,
    cost_usd: Number(expected.costUsd),
    model: expected.model,
    provider: expected.provider,
    attempts: expected.attempts ?? 1,
  });
  const charges = await gw.charges(tenant.account.id);
  if (expected.costMicros === 0) expect(charges).toEqual([]);
  else expect(charges).toMatchObject([{ kind: 'charge', amountMicros: -expected.costMicros, requestId }]);
  expect(await gw.balance(tenant.account.id)).toBe(tenant.account.balanceMicros - expected.costMicros);
  const record = await gw.generation(requestId, tenant.inferenceKey);
  expect(record).toMatchObject({
    id: requestId,
    status: 'success',
    http_status: 200,
    model: expected.model,
    provider: expected.provider,
    cost_micros: expected.costMicros,
    attempts: expected.attempts ?? 1,
    error: null,
  });
  return { body, record };
}

/**
 * A request refused before anything was held: the error envelope with `status` and `code`, nothing
 * sent upstream, nothing charged, and a `refused` record carrying the code. Returns the envelope's
 * `error` and the record.
 */
export async function expectRefused(
  gw: InferenceGateway,
  tenant: Tenant,
  response: Response,
  expected: { status: number; code: string; endpoint: string },
): Promise<{ error: Json; record: Json }> {
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(expected.status);
  expect(body.error.code).toBe(expected.code);
  expect(gw.upstream.calls).toEqual([]);
  expect(await gw.charges(tenant.account.id)).toEqual([]);
  expect(await gw.balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
  const record = await gw.generation(requestIdOf(response), tenant.inferenceKey);
  expect(record).toMatchObject({
    endpoint: expected.endpoint,
    status: 'refused',
    http_status: expected.status,
    error: { code: expected.code },
    cost_micros: 0,
  });
  return { error: body.error, record };
}

/**
 * Every route failed: `502 upstream_error`, nothing charged, an `error` record with the attempts
 * and the routing trail. Returns the record.
 */
export async function expectUpstreamFailure(
  gw: InferenceGateway,
  tenant: Tenant,
  response: Response,
  expected: { endpoint: string; failures: { provider: string; status: number | null; reason: string }[] },
): Promise<Json> {
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(502);
  expect(body.error.code).toBe('upstream_error');
  expect(response.headers.get('x-gateway-cost-usd')).toBeNull();
  expect(await gw.charges(tenant.account.id)).toEqual([]);
  expect(await gw.balance(tenant.account.id)).toBe(tenant.account.balanceMicros);
  const record = await gw.generation(requestIdOf(response), tenant.inferenceKey);
  expect(record).toMatchObject({
    endpoint: expected.endpoint,
    status: 'error',
    http_status: 502,
    error: { code: 'upstream_error' },
    cost_micros: 0,
    attempts: expected.failures.length,
    routing: { failures: expected.failures },
  });
  return record;
}
