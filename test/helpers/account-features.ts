import { expect } from 'vitest';
import type { InferenceGateway, Json } from './inference-wire.js';
import type { Tenant } from './tenant.js';
import { testConfig } from './test-config.js';

/**
 * The catalogue the account features (BYOK, the response cache, presets, middle-out) are tested on:
 * - `p1`, `p2` (OpenAI format, the deployment's keys `sk-p1`, `sk-p2`), `co` (Cohere, `sk-co`), and
 *   `byo` (OpenAI format, no deployment key: usable only with an account's own key);
 * - `acme/chat` on p1 (1 / 2 USD per M prompt / completion tokens), `acme/chat-two` on p1 then p2,
 *   `acme/chat-byo` on byo, `acme/chat-small` (a 300-token context) on p1;
 * - `acme/embed` (p1, 0.02 per M), `acme/image` (p1, 0.04 per image), `acme/rerank` (co, 0.002 per
 *   search unit).
 */
export const accountFeaturesConfig = testConfig({
  providers: {
    p1: { format: 'openai', base_url: 'http://upstream.test/p1/v1', api_key: 'sk-p1' },
    p2: { format: 'openai', base_url: 'http://upstream.test/p2/v1', api_key: 'sk-p2' },
    co: { format: 'cohere', base_url: 'http://upstream.test/co/v2', api_key: 'sk-co' },
    byo: { format: 'openai', base_url: 'http://upstream.test/byo/v1' },
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
      id: 'acme/chat-two',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'p1', upstream_model: 'gpt-4o-mini', pricing: { prompt: '1', completion: '2' } },
        { provider: 'p2', upstream_model: 'mirror-mini', pricing: { prompt: '1', completion: '2' } },
      ],
    },
    {
      id: 'acme/chat-byo',
      max_output_tokens: 100,
      endpoints: [
        { provider: 'byo', upstream_model: 'byo-model', pricing: { prompt: '3', completion: '6' } },
      ],
    },
    {
      id: 'acme/chat-small',
      context_length: 300,
      max_output_tokens: 50,
      endpoints: [{ provider: 'p1', upstream_model: 'small-1', pricing: { prompt: '1', completion: '2' } }],
    },
    {
      id: 'acme/embed',
      type: 'embedding',
      endpoints: [{ provider: 'p1', upstream_model: 'text-embedding-3-small', pricing: { prompt: '0.02' } }],
    },
    {
      id: 'acme/image',
      type: 'image',
      endpoints: [{ provider: 'p1', upstream_model: 'dall-e-3', pricing: { image: '0.04' } }],
    },
    {
      id: 'acme/rerank',
      type: 'rerank',
      endpoints: [{ provider: 'co', upstream_model: 'rerank-v3.5', pricing: { search: '0.002' } }],
    },
  ],
});

/** The cost of the default chat reply (12 prompt, 5 completion tokens) on `acme/chat`: 22 micros. */
export const DEFAULT_CHAT_COST_MICROS = 12 * 1 + 5 * 2;

/** A chat request for `acme/chat` (or another model). */
export function chatBody(extra: Record<string, unknown> = {}): Json {
  return { model: 'acme/chat', messages: [{ role: 'user', content: 'Say hello.' }], ...extra };
}

/** `POST /v1/byok` with the tenant's provisioning key; returns the created key's view. */
export async function addByokKey(
  gw: InferenceGateway,
  tenant: Tenant,
  body: { provider: string; api_key: string; allow_fallback?: boolean; label?: string },
): Promise<Json> {
  const response = await gw.post('/v1/byok', body, tenant.provisioningKey);
  const answer = (await response.json()) as Json;
  expect(response.status, JSON.stringify(answer)).toBe(201);
  return answer.data ?? answer;
}

/** `POST /v1/presets` with the tenant's provisioning key. */
export async function addPreset(
  gw: InferenceGateway,
  tenant: Tenant,
  body: { name: string; description?: string; config: Record<string, unknown> },
): Promise<void> {
  const response = await gw.post('/v1/presets', body, tenant.provisioningKey);
  expect(response.status, await response.clone().text()).toBe(201);
}

/** The `GET /v1/usage?days=1` totals of the tenant. */
export async function usageTotals(gw: InferenceGateway, tenant: Tenant): Promise<Json> {
  const response = await gw.get('/v1/usage?days=1', tenant.inferenceKey);
  expect(response.status).toBe(200);
  const body = (await response.json()) as Json;
  return body.data?.totals ?? body.totals;
}
