import { z } from 'zod';
import { DEFAULT_CLIENT_CREDENTIALS_TTL_S } from '../admin/oauth/oauth-settings.js';
import { webSearchProviderSchema } from '../features/web-search/web-search-schema.js';
import { usdMicrosSchema } from '../money/usd-schema.js';

/** A decimal USD amount given as a string or a number, parsed exactly into integer micros. */
const usdMicros = usdMicrosSchema({ positive: false, allowString: true });

/** The prompt tokens one image part is held at when its model sets no `image_input_tokens` (product.md). */
export const DEFAULT_IMAGE_INPUT_TOKENS = 3_000;

/** `limits.max_request_mb` and `limits.max_attachment_mb` when the config sets none (product.md). */
export const DEFAULT_MAX_REQUEST_MB = 10;
export const DEFAULT_MAX_ATTACHMENT_MB = 5;

/** The wire formats a provider may speak; `demo` answers in-process (providers/demo/). */
export const PROVIDER_FORMATS = ['openai', 'anthropic', 'cohere', 'demo', 'web-search'] as const;
export type ProviderFormat = (typeof PROVIDER_FORMATS)[number];

/** An upstream reached over HTTP. */
const httpProviderSchema = z
  .object({
    format: z.enum(['openai', 'anthropic', 'cohere']),
    base_url: z.url(),
    api_key: z.string().min(1).optional(),
    api_key_env: z.string().min(1).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    timeout_ms: z.int().positive().optional(),
    /** Longest silence between two reads of a stream (default 60 000): then it ends as failed. */
    stream_idle_timeout_ms: z.int().positive().optional(),
    /**
     * The chat field an `openai`-format upstream takes the output ceiling in (default `max_tokens`;
     * OpenAI's newer models take only `max_completion_tokens`). A request that names neither gets
     * the ceiling it was held against in this field, so no upstream generates past the hold.
     */
    max_tokens_field: z.enum(['max_tokens', 'max_completion_tokens']).optional(),
    /**
     * An `openai`-format upstream that serves the Responses API itself (`{base_url}/responses`):
     * `POST /v1/responses` calls routed to it go there natively instead of through chat.
     */
    responses: z.boolean().optional(),
  })
  .strict()
  .refine((p) => p.responses !== true || p.format === 'openai', {
    path: ['responses'],
    message: 'only an openai-format provider can serve the Responses API natively',
  });

/** The built-in offline provider: no URL, no key, always usable. */
const demoProviderSchema = z.object({ format: z.literal('demo') }).strict();

const providerSchema = z.discriminatedUnion('format', [
  httpProviderSchema,
  demoProviderSchema,
  webSearchProviderSchema,
]);

/** The model types of product.md; each is served by one inference endpoint. */
export const MODEL_TYPES = ['chat', 'embedding', 'image', 'rerank'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

/**
 * Decimal USD prices: `prompt`, `completion`, `cached_prompt`, `cache_write` per million tokens;
 * `image` per image generated; `search` per search unit (one query over up to 100 documents). A key
 * the model's type does not use may be absent ({@link PRICING_KEYS_USED} lists the required ones).
 */
const pricingSchema = z
  .object({
    prompt: usdMicros.optional(),
    completion: usdMicros.optional(),
    cached_prompt: usdMicros.optional(),
    cache_write: usdMicros.optional(),
    image: usdMicros.optional(),
    search: usdMicros.optional(),
  })
  .strict();

/** The pricing keys a model of each type must give. */
export const PRICING_KEYS_USED: Record<ModelType, readonly ('prompt' | 'completion' | 'image' | 'search')[]> =
  {
    chat: ['prompt', 'completion'],
    embedding: ['prompt'],
    image: ['image'],
    rerank: ['search'],
  };

/** The provider formats that can serve each model type (`demo` serves every type, offline). */
const FORMATS_SERVING: Record<ModelType, readonly ProviderFormat[]> = {
  chat: ['openai', 'anthropic', 'demo'],
  embedding: ['openai', 'demo'],
  image: ['openai', 'demo'],
  rerank: ['openai', 'cohere', 'demo'],
};

const endpointSchema = z
  .object({
    provider: z.string().min(1),
    upstream_model: z.string().min(1),
    pricing: pricingSchema,
  })
  .strict();

const MODEL_ID = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._:-]+$/;

const modelSchema = z
  .object({
    id: z.string().regex(MODEL_ID, 'must look like "<vendor>/<model>"'),
    name: z.string().min(1).optional(),
    type: z.enum(MODEL_TYPES).default('chat'),
    context_length: z.int().positive().optional(),
    /** Required for chat models only. */
    max_output_tokens: z.int().positive().optional(),
    /**
     * What one image in a prompt may cost in prompt tokens, for the pre-flight (default
     * {@link DEFAULT_IMAGE_INPUT_TOKENS}); an image is never held at the length of its URL or data.
     */
    image_input_tokens: z.int().positive().optional(),
    capabilities: z
      .object({ tools: z.boolean().default(false) })
      .strict()
      .default({ tools: false }),
    endpoints: z.array(endpointSchema).min(1),
  })
  .strict();

/** The config file of product.md, validated at start-up. Prices come out as integer micros. */
export const gatewayConfigSchema = z
  .object({
    $schema: z.string().optional(),
    providers: z.record(z.string().regex(/^[A-Za-z0-9._-]+$/), providerSchema),
    models: z.array(modelSchema),
    defaults: z
      .object({ rate_limit_rpm: z.int().positive().default(600) })
      .strict()
      .default({ rate_limit_rpm: 600 }),
    billing: z.object({ top_up_fee_percent: usdMicros.optional() }).strict().default({}),
    /** Request size caps in MB (2^20 bytes): the whole body, and one `data:` URL or base64 part. */
    limits: z
      .object({
        max_request_mb: z.number().positive().default(DEFAULT_MAX_REQUEST_MB),
        max_attachment_mb: z.number().positive().default(DEFAULT_MAX_ATTACHMENT_MB),
      })
      .strict()
      .default({ max_request_mb: DEFAULT_MAX_REQUEST_MB, max_attachment_mb: DEFAULT_MAX_ATTACHMENT_MB }),
    otlp: z
      .object({ endpoint: z.url().optional(), timeout_ms: z.int().positive().default(1000) })
      .strict()
      .optional(),
    /** The batch worker of each server process: items run at once, and how long a claim lasts unless renewed. */
    batches: z
      .object({
        concurrency: z.int().min(1).max(256).default(8),
        lease_ms: z.int().min(1000).max(3_600_000).default(30_000),
      })
      .strict()
      .default({ concurrency: 8, lease_ms: 30_000 }),
    /**
     * The gateway's address as clients reach it (`https://llm.example.com`, a path allowed): the
     * OAuth metadata's `issuer` and the base of the URLs it names. Default: the address the server
     * listens on.
     */
    public_url: z
      .url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' })
      .refine((url) => !/[?#]/.test(url), 'must have no query and no fragment')
      .optional(),
    /** OAuth: `client_credentials_ttl_s` is how long a client-credentials token lives (default 3,600 s). */
    oauth: z
      .object({
        client_credentials_ttl_s: z
          .int()
          .min(60)
          .max(30 * 86_400)
          .default(DEFAULT_CLIENT_CREDENTIALS_TTL_S),
      })
      .strict()
      .default({ client_credentials_ttl_s: DEFAULT_CLIENT_CREDENTIALS_TTL_S }),
    /** `GET /metrics` of the Node server: on unless `enabled` is false; `token` asks scrapes for `Bearer <token>`. */
    metrics: z
      .object({ enabled: z.boolean().default(true), token: z.string().min(1).optional() })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((config, ctx) => {
    const seen = new Set<string>();
    config.models.forEach((model, m) => {
      if (seen.has(model.id)) {
        ctx.addIssue({
          code: 'custom',
          path: ['models', m, 'id'],
          message: `duplicate model id "${model.id}"`,
        });
      }
      seen.add(model.id);
      if (model.type === 'chat' && model.max_output_tokens === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['models', m, 'max_output_tokens'],
          message: 'required for a chat model',
        });
      }
      model.endpoints.forEach((endpoint, e) => {
        const provider = config.providers[endpoint.provider];
        if (!provider) {
          ctx.addIssue({
            code: 'custom',
            path: ['models', m, 'endpoints', e, 'provider'],
            message: `unknown provider "${endpoint.provider}" (not in "providers")`,
          });
        } else if (!FORMATS_SERVING[model.type].includes(provider.format)) {
          ctx.addIssue({
            code: 'custom',
            path: ['models', m, 'endpoints', e, 'provider'],
            message: `provider "${endpoint.provider}" (format ${provider.format}) cannot serve a ${model.type} model`,
          });
        }
        for (const key of PRICING_KEYS_USED[model.type]) {
          if (endpoint.pricing[key] === undefined) {
            ctx.addIssue({
              code: 'custom',
              path: ['models', m, 'endpoints', e, 'pricing', key],
              message: `required for a ${model.type} model`,
            });
          }
        }
      });
    });
    for (const [id, provider] of Object.entries(config.providers)) {
      if (provider.format !== 'demo' && provider.api_key && provider.api_key_env) {
        ctx.addIssue({
          code: 'custom',
          path: ['providers', id],
          message: 'give either "api_key" or "api_key_env", not both',
        });
      }
    }
  });

export type GatewayConfigInput = z.input<typeof gatewayConfigSchema>;
export type GatewayConfig = z.output<typeof gatewayConfigSchema>;

/** An invalid config file: `message` names the JSON path and the problem of every issue. */
export class ConfigError extends Error {
  constructor(readonly issues: { path: string; message: string }[]) {
    super(`invalid config:\n${issues.map((i) => `  at ${i.path}: ${i.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Validates a parsed config file; throws `ConfigError` naming each bad JSON path. */
export function parseGatewayConfig(input: unknown): GatewayConfig {
  const result = gatewayConfigSchema.safeParse(input);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map((issue) => ({ path: jsonPath(issue.path), message: issue.message })),
  );
}

function jsonPath(path: PropertyKey[]): string {
  let out = '$';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  return out;
}
