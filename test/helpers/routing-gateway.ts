import { createApiKey, type GatewayConfig, type LedgerEntry, parseGatewayConfig } from '@tollgate/core';
import type { MockReply, MockUpstream } from './mock-upstream.js';
import { type E2eGateway, startE2eGateway } from './start-e2e-gateway.js';
import { type OpenedStorage, openSqlite } from './storage-variants.js';

/**
 * The OpenAI-format providers of the routing catalogue, each on its own path of one loopback mock
 * (`${mock.url}/<id>/v1`). `slow` and `slow2` have a small per-attempt timeout.
 */
export const ROUTING_PROVIDERS = ['p1', 'p2', 'p3', 'b1', 'b2', 'slow', 'slow2', 'gratis'] as const;
export type RoutingProvider = (typeof ROUTING_PROVIDERS)[number];

/** Per-attempt time to first byte of `slow` and `slow2` (ms). */
export const SLOW_TIMEOUT_MS = 300;

/** The mock path of a provider's chat completions (the queue key of `MockUpstream`). */
export function upstreamPath(provider: RoutingProvider): string {
  return `/${provider}/v1/chat/completions`;
}

/**
 * The catalogue: `acme/alpha` on p1 → p2 → p3 (p2 cheapest, p3 dearest), `acme/beta` on b1 → b2
 * (the `models` fallback), `acme/slowpoke` on slow → p2, `acme/sluggish` on slow → slow2,
 * `acme/mixed` on p1 (paid) → gratis (zero price), `acme/paid` on p1 only, `acme/pricey` on p1 with
 * a huge output ceiling and price (for pre-flight refusals).
 */
export function routingConfig(upstreamUrl: string, defaultRpm = 100_000): GatewayConfig {
  const provider = (id: RoutingProvider, extra: Record<string, unknown> = {}) => [
    id,
    { format: 'openai', base_url: `${upstreamUrl}/${id}/v1`, api_key: `sk-${id}`, ...extra },
  ];
  const price = (prompt: string, completion: string) => ({ prompt, completion });
  return parseGatewayConfig({
    providers: Object.fromEntries([
      provider('p1'),
      provider('p2'),
      provider('p3'),
      provider('b1'),
      provider('b2'),
      provider('slow', { timeout_ms: SLOW_TIMEOUT_MS }),
      provider('slow2', { timeout_ms: SLOW_TIMEOUT_MS }),
      provider('gratis'),
    ]),
    models: [
      {
        id: 'acme/alpha',
        max_output_tokens: 1000,
        endpoints: [
          { provider: 'p1', upstream_model: 'alpha-p1', pricing: price('1', '2') },
          { provider: 'p2', upstream_model: 'alpha-p2', pricing: price('0.5', '1') },
          { provider: 'p3', upstream_model: 'alpha-p3', pricing: price('3', '6') },
        ],
      },
      {
        id: 'acme/beta',
        max_output_tokens: 1000,
        endpoints: [
          { provider: 'b1', upstream_model: 'beta-b1', pricing: price('1', '2') },
          { provider: 'b2', upstream_model: 'beta-b2', pricing: price('1', '2') },
        ],
      },
      {
        id: 'acme/slowpoke',
        max_output_tokens: 1000,
        endpoints: [
          { provider: 'slow', upstream_model: 'slowpoke-slow', pricing: price('1', '2') },
          { provider: 'p2', upstream_model: 'slowpoke-p2', pricing: price('1', '2') },
        ],
      },
      {
        id: 'acme/sluggish',
        max_output_tokens: 1000,
        endpoints: [
          { provider: 'slow', upstream_model: 'sluggish-slow', pricing: price('1', '2') },
          { provider: 'slow2', upstream_model: 'sluggish-slow2', pricing: price('1', '2') },
        ],
      },
      {
        id: 'acme/mixed',
        max_output_tokens: 1000,
        endpoints: [
          { provider: 'p1', upstream_model: 'mixed-p1', pricing: price('1', '2') },
          { provider: 'gratis', upstream_model: 'mixed-free', pricing: price('0', '0') },
        ],
      },
      {
        id: 'acme/paid',
        max_output_tokens: 1000,
        endpoints: [{ provider: 'p1', upstream_model: 'paid-p1', pricing: price('1', '2') }],
      },
      {
        id: 'acme/pricey',
        max_output_tokens: 1_000_000,
        endpoints: [{ provider: 'p1', upstream_model: 'pricey-p1', pricing: price('100', '100') }],
      },
    ],
    defaults: { rate_limit_rpm: defaultRpm },
  });
}

/** Options of the routing gateway. */
export interface RoutingGatewayOptions {
  /** Gateway `attemptsPerRoute` (default: the gateway's own default, 3). */
  attemptsPerRoute?: number;
  /** The deployment default rpm (config `defaults.rate_limit_rpm`). */
  defaultRpm?: number;
  /** Share a mock with another gateway (default: a new one, stopped by `close`). */
  mock?: MockUpstream;
  /** `false`: in-process, requests straight to `gateway.fetch` (default: the real Node server). */
  serve?: boolean;
}

/** The shared end-to-end gateway on the routing catalogue, plus key and ledger shortcuts. */
export interface RoutingGateway extends E2eGateway<OpenedStorage & { path: string }> {
  /** Another inference key of the account, with its own rpm (null = the account default). */
  newKey(accountId: string, rateLimitRpm: number | null): Promise<{ id: string; secret: string }>;
  ledger(accountId: string): Promise<LedgerEntry[]>;
}

/**
 * The gateway over a fresh SQLite file, with the routing catalogue on a loopback mock, served by the
 * real Node server unless `options.serve` is `false`.
 * Its clock (`InstantClock`) records the backoff waits without sleeping; jitter is `Math.random`
 * unless the test sets `clock.randoms`.
 */
export async function startRoutingGateway(options: RoutingGatewayOptions = {}): Promise<RoutingGateway> {
  const defaultRpm = options.defaultRpm ?? 100_000;
  const gw = await startE2eGateway({
    config: (url) => routingConfig(url, defaultRpm),
    open: () => openSqlite(),
    gateway: {
      defaultRateLimitRpm: defaultRpm,
      ...(options.attemptsPerRoute !== undefined && { attemptsPerRoute: options.attemptsPerRoute }),
    },
    ...(options.mock && { mock: options.mock }),
    ...(options.serve === false && { serve: false }),
  });
  return {
    ...gw,
    async newKey(accountId, rateLimitRpm) {
      const { key, secret } = await createApiKey(gw.storage, {
        accountId,
        name: `rpm ${rateLimitRpm ?? 'default'}`,
        scope: 'inference',
        env: 'live',
        rateLimitRpm,
      });
      return { id: key.id, secret };
    },
    ledger: (accountId) => gw.storage.listLedgerEntries(accountId),
  };
}

/** A chat completion as an OpenAI-format provider answers it. */
export function completionBody(
  text: string,
  usage: { prompt: number; completion: number } = { prompt: 12, completion: 5 },
  model = 'upstream-model',
) {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 10)}`,
    object: 'chat.completion',
    created: 1_770_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
    },
  };
}

/** A successful provider answer. */
export function ok(text = 'routed answer'): MockReply {
  return { kind: 'json', body: completionBody(text) };
}

/** A provider failure with status `status` (an OpenAI error envelope, optional headers). */
export function fail(status: number, headers: Record<string, string> = {}, message = `upstream ${status}`) {
  return {
    kind: 'json' as const,
    status,
    headers,
    body: { error: { message, type: 'server_error', param: null, code: null } },
  } satisfies MockReply;
}

/** The providers the mock was asked, in order, read from the request paths. */
export function providersSeen(mock: MockUpstream): string[] {
  return mock.received.map((r) => r.path.split('/')[1] ?? '?');
}

/** A one-message chat request. */
export function chat(model: string, extra: Record<string, unknown> = {}) {
  return { model, messages: [{ role: 'user' as const, content: 'Say hi.' }], ...extra };
}

/**
 * A successful JSON answer that the mock holds back until `mock.release()`: an `sse` reply whose one
 * "event" is the whole JSON body, held before it is written. Nothing (not even the status line) is
 * sent until then, and the gateway's non-streaming adapter reads the body as JSON whatever its
 * content type, so to the gateway this is a provider that is slow to answer.
 */
export function heldOk(text = 'held answer'): MockReply {
  return { kind: 'sse', events: [JSON.stringify(completionBody(text))], holdAfter: 0 };
}
