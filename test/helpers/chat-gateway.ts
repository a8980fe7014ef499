import { type GatewayConfig, parseGatewayConfig } from '@tollgate/core';
import { InstantClock } from './instant-clock.js';
import { describeOnEachVariant, type E2eGateway, startE2eGateway } from './start-e2e-gateway.js';
import type { StorageVariant } from './storage-variants.js';

/** Where each provider of the chat catalogue sends its calls on the mock upstream (path suffixes). */
export const UPSTREAM = {
  openai: '/openai/v1/chat/completions',
  anthropic: '/anthropic/v1/messages',
  backup: '/backup/v1/chat/completions',
  deepseek: '/deepseek/v1/chat/completions',
  groq: '/groq/v1/chat/completions',
} as const;

/** The upstream keys of the chat catalogue's providers (what the mock must receive). */
export const PROVIDER_KEYS = {
  openai: 'sk-openai-e2e-upstream',
  anthropic: 'sk-ant-e2e-upstream',
  backup: 'sk-backup-e2e-upstream',
  deepseek: 'sk-deepseek-e2e-upstream',
  groq: 'gsk-e2e-upstream',
} as const;

/** Output ceilings of the catalogue models (used when a request has no `max_tokens`). */
export const MAX_OUTPUT = { gpt: 16_384, claude: 4_096 } as const;

/**
 * The chat catalogue, pointing at the mock upstream. Prices (USD per million tokens) are chosen so
 * that each fixture's cost can be worked out by hand in the tests:
 * - `acme/gpt` 0.11 / 0.44 / cached 0.055: fractional parts, so rounding each part separately
 *   would give a different total than rounding the sum once (see chat-completions test 1);
 * - `acme/gpt-4o` 2.50 / 10 / cached 1.25: round numbers for the estimate-based charges
 *   (broken and abandoned streams);
 * - `acme/claude` 3 / 15 / cached 0.30 / cache_write 3.75 (Anthropic format);
 * - `deepseek/reasoner` 0.55 / 2.19 / cached 0.14 and `groq/llama` 0.59 / 0.79 (OpenAI-compatible);
 * - `acme/free`: all prices 0; `acme/gpt-notools`: `capabilities.tools` false; `acme/keyless`: its
 *   only provider has no key; `acme/ha`: two routes (openai, then backup) for failover.
 */
export function chatConfig(mockUrl: string): GatewayConfig {
  return parseGatewayConfig({
    providers: {
      openai: { format: 'openai', base_url: `${mockUrl}/openai/v1`, api_key: PROVIDER_KEYS.openai },
      anthropic: {
        format: 'anthropic',
        base_url: `${mockUrl}/anthropic/v1`,
        api_key: PROVIDER_KEYS.anthropic,
      },
      backup: { format: 'openai', base_url: `${mockUrl}/backup/v1`, api_key: PROVIDER_KEYS.backup },
      deepseek: { format: 'openai', base_url: `${mockUrl}/deepseek/v1`, api_key: PROVIDER_KEYS.deepseek },
      groq: { format: 'openai', base_url: `${mockUrl}/groq/v1`, api_key: PROVIDER_KEYS.groq },
      nokey: {
        format: 'openai',
        base_url: `${mockUrl}/nokey/v1`,
        api_key_env: 'TOLLGATE_CHAT_E2E_UNSET_PROVIDER_KEY',
      },
    },
    models: [
      {
        id: 'acme/gpt',
        max_output_tokens: MAX_OUTPUT.gpt,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'openai',
            upstream_model: 'gpt-4o-mini',
            pricing: { prompt: '0.11', completion: '0.44', cached_prompt: '0.055' },
          },
        ],
      },
      {
        id: 'acme/gpt-4o',
        max_output_tokens: MAX_OUTPUT.gpt,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'openai',
            upstream_model: 'gpt-4o',
            pricing: { prompt: '2.50', completion: '10', cached_prompt: '1.25' },
          },
        ],
      },
      {
        id: 'acme/claude',
        max_output_tokens: MAX_OUTPUT.claude,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'anthropic',
            upstream_model: 'claude-sonnet-4-5',
            pricing: { prompt: '3', completion: '15', cached_prompt: '0.30', cache_write: '3.75' },
          },
        ],
      },
      {
        id: 'acme/gpt-notools',
        max_output_tokens: 4_096,
        capabilities: { tools: false },
        endpoints: [
          {
            provider: 'openai',
            upstream_model: 'gpt-instruct',
            pricing: { prompt: '0.5', completion: '1.5' },
          },
        ],
      },
      {
        id: 'acme/free',
        max_output_tokens: 4_096,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'openai', upstream_model: 'free-1', pricing: { prompt: '0', completion: '0' } },
        ],
      },
      {
        id: 'acme/keyless',
        max_output_tokens: 4_096,
        endpoints: [{ provider: 'nokey', upstream_model: 'k-1', pricing: { prompt: '1', completion: '2' } }],
      },
      {
        id: 'acme/ha',
        max_output_tokens: 4_096,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'openai',
            upstream_model: 'ha-primary',
            pricing: { prompt: '0.11', completion: '0.44' },
          },
          {
            provider: 'backup',
            upstream_model: 'ha-secondary',
            pricing: { prompt: '0.11', completion: '0.44' },
          },
        ],
      },
      {
        id: 'deepseek/reasoner',
        max_output_tokens: 8_192,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'deepseek',
            upstream_model: 'deepseek-reasoner',
            pricing: { prompt: '0.55', completion: '2.19', cached_prompt: '0.14' },
          },
        ],
      },
      {
        id: 'groq/llama',
        max_output_tokens: 8_192,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'groq',
            upstream_model: 'llama-3.3-70b-versatile',
            pricing: { prompt: '0.59', completion: '0.79' },
          },
        ],
      },
    ],
  });
}

/** The chat gateway: the shared end-to-end gateway on the chat catalogue. */
export type ChatTestGateway = E2eGateway;

/** Options of the chat gateway. */
export interface ChatGatewayOptions {
  /** `false`: in-process, requests straight to `gateway.fetch` (default: the real Node server). */
  serve?: boolean;
  attemptsPerRoute?: number;
  /** How long a credit hold lives without being extended (the gateway default is 15 minutes). */
  reservationTtlMs?: number;
}

/**
 * The gateway over `variant`'s storage, calling the mock upstream through the same pooled undici
 * client `tollgate serve` uses; served by the real Node server unless `options.serve` is `false`.
 */
export function startChatGateway(
  variant: StorageVariant,
  options: ChatGatewayOptions = {},
): Promise<ChatTestGateway> {
  return startE2eGateway({
    config: chatConfig,
    open: () => variant.open(),
    // Backoff waits resolve at once and jitter is 0: a walk over failing routes stays fast and deterministic.
    clock: new InstantClock(() => 0),
    undici: true,
    ...(options.serve === false && { serve: false }),
    gateway: {
      ...(options.attemptsPerRoute !== undefined && { attemptsPerRoute: options.attemptsPerRoute }),
      ...(options.reservationTtlMs !== undefined && { reservationTtlMs: options.reservationTtlMs }),
    },
  });
}

/** {@link describeChatOnEachStorage} with the gateway in-process (`serve: false`). */
export function describeChatInProcess(
  title: string,
  body: (gw: () => ChatTestGateway, variant: StorageVariant) => void,
  options: Omit<ChatGatewayOptions, 'serve'> = {},
): void {
  describeChatOnEachStorage(title, body, { ...options, serve: false });
}

/**
 * Declares `body` once per storage variant (SQLite always; Postgres when `TEST_DATABASE_URL` is
 * set, else skipped with the reason printed), each with its own gateway and mock upstream started
 * before the first test. The mock is reset before every test.
 */
export function describeChatOnEachStorage(
  title: string,
  body: (gw: () => ChatTestGateway, variant: StorageVariant) => void,
  options: ChatGatewayOptions = {},
): void {
  describeOnEachVariant(
    title,
    (variant) => startChatGateway(variant, options),
    body,
    (gw) => gw.mock.reset(),
  );
}
