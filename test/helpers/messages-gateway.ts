import Anthropic from '@anthropic-ai/sdk';
import { type GatewayConfig, type GatewayConfigInput, parseGatewayConfig } from '@tollgate/core';
import { expect } from 'vitest';
import { type E2eGateway, startE2eGateway } from './start-e2e-gateway.js';
import type { StorageVariant } from './storage-variants.js';

/** Prices of the Anthropic routes, USD per million tokens; the cache lines of product.md. */
export const CLAUDE_PRICING = { prompt: '3', completion: '15', cached_prompt: '0.30', cache_write: '3.75' };
/** Prices of the OpenAI-format route. */
export const GPT_PRICING = { prompt: '0.15', completion: '0.60', cached_prompt: '0.075' };

export const CLAUDE = 'anthropic/claude-sonnet-4-5';
export const CLAUDE_UPSTREAM = 'claude-sonnet-4-5-20250929';
export const GPT = 'openai/gpt-4o-mini';
export const DEMO = 'demo/chat-small';

/** Where the mock upstream answers each provider (a path suffix of its queue). */
export const UPSTREAM = {
  anthropic: '/anthropic/v1/messages',
  spare: '/spare/v1/messages',
  countTokens: '/anthropic/v1/messages/count_tokens',
  openai: '/openai/v1/chat/completions',
} as const;

/**
 * One model passed through to Anthropic (two Anthropic-format providers, for failover), one
 * translated to an OpenAI-format upstream that takes `max_completion_tokens`, and the demo model.
 */
export function messagesConfig(mockUrl: string): GatewayConfig {
  return parseGatewayConfig(messagesConfigInput(mockUrl));
}

/** {@link messagesConfig} as the JSON config holds it (for `createTestGateway`). */
export function messagesConfigInput(mockUrl: string): GatewayConfigInput {
  return {
    providers: {
      anthropic: { format: 'anthropic', base_url: `${mockUrl}/anthropic/v1`, api_key: 'sk-ant-upstream' },
      spare: { format: 'anthropic', base_url: `${mockUrl}/spare/v1`, api_key: 'sk-ant-spare' },
      openai: {
        format: 'openai',
        base_url: `${mockUrl}/openai/v1`,
        api_key: 'sk-openai-upstream',
        max_tokens_field: 'max_completion_tokens',
      },
      demo: { format: 'demo' },
    },
    models: [
      {
        id: CLAUDE,
        context_length: 200000,
        max_output_tokens: 64000,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'anthropic', upstream_model: CLAUDE_UPSTREAM, pricing: CLAUDE_PRICING },
          { provider: 'spare', upstream_model: CLAUDE_UPSTREAM, pricing: CLAUDE_PRICING },
        ],
      },
      {
        id: GPT,
        context_length: 128000,
        max_output_tokens: 16384,
        capabilities: { tools: true },
        endpoints: [{ provider: 'openai', upstream_model: 'gpt-4o-mini', pricing: GPT_PRICING }],
      },
      {
        id: DEMO,
        max_output_tokens: 4096,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'demo', upstream_model: 'chat-small', pricing: { prompt: '1', completion: '2' } },
        ],
      },
    ],
  };
}

/** The real Node server on `variant`'s storage, calling upstream through the pooled client `serve` uses. */
export function startMessagesGateway(variant: StorageVariant): Promise<E2eGateway> {
  return startE2eGateway({ config: messagesConfig, open: () => variant.open(), undici: true });
}

/** The official Anthropic SDK at the gateway, with the key as `x-api-key` (`apiKey`) or as a bearer token (`authToken`). */
export function anthropicClient(url: string, key: string, as: 'apiKey' | 'authToken' = 'apiKey'): Anthropic {
  return new Anthropic({
    baseURL: url,
    maxRetries: 0,
    timeout: 20_000,
    ...(as === 'apiKey' ? { apiKey: key, authToken: null } : { apiKey: null, authToken: key }),
  });
}

/** Micros of a usage at `pricing` (USD per million tokens), rounded up once, as product.md prices it. */
export function micros(
  pricing: { prompt: string; completion: string; cached_prompt?: string; cache_write?: string },
  tokens: { input: number; output: number; cacheRead?: number; cacheWrite?: number },
): number {
  const per = (usd: string | undefined) => Math.round(Number(usd ?? '0') * 1_000_000);
  const total =
    tokens.input * per(pricing.prompt) +
    (tokens.cacheRead ?? 0) * per(pricing.cached_prompt ?? pricing.prompt) +
    (tokens.cacheWrite ?? 0) * per(pricing.cache_write ?? pricing.prompt) +
    tokens.output * per(pricing.completion);
  return Math.ceil(total / 1_000_000);
}

/** The `gateway` object of a Messages answer read through the SDK (it is not in the SDK's types). */
// biome-ignore lint/suspicious/noExplicitAny: the gateway object is not in the SDK's types.
export function gatewayOf(answer: unknown): any {
  const gateway = (answer as { gateway?: unknown }).gateway;
  expect(gateway, 'the answer carries the gateway object').toBeDefined();
  return gateway;
}
