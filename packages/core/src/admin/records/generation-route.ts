import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { hasNul } from '../../http/stored-text.js';
import { microsToUsdNumber } from '../../money/micros.js';
import type { RequestRecord } from '../../storage/metering-types.js';

const failureSchema = z.object({ provider: z.string(), status: z.int().nullable(), reason: z.string() });

export const generationSchema = z
  .object({
    id: z.string(),
    endpoint: z.string(),
    model: z.string().nullable(),
    requested_model: z.string().nullable(),
    provider: z.string().nullable(),
    key_id: z.string().nullable(),
    project_id: z.string().nullable(),
    status: z.string(),
    http_status: z.int(),
    error: z.object({ code: z.string(), message: z.string().nullable() }).nullable(),
    stream: z.boolean(),
    usage: z.object({ prompt_tokens: z.int(), completion_tokens: z.int(), cached_tokens: z.int() }),
    cost_micros: z.int(),
    cost_usd: z.number(),
    saved_micros: z.int(),
    saved_usd: z.number(),
    overrun_micros: z.int(),
    waived: z.string().nullable(),
    byok: z.boolean(),
    cache_hit: z.boolean(),
    preset: z.string().nullable(),
    ttft_ms: z.int().nullable(),
    duration_ms: z.int().nullable(),
    finish_reason: z.string().nullable(),
    attempts: z.int(),
    routing: z.object({ failures: z.array(failureSchema) }),
    attachments: z.record(z.string(), z.int()),
    /** The guardrails that fired: which rule, never the text it matched. */
    guardrails: z.array(
      z.object({
        rule_id: z.string(),
        name: z.string(),
        category: z.enum(['payment_card', 'email', 'phone', 'regex', 'keyword']),
        stage: z.enum(['input', 'output']),
      }),
    ),
    metadata: z.record(z.string(), z.string()),
    created_at: z.string(),
  })
  .meta({ id: 'Generation' });

/** A request record as `GET /generation` shows it. */
export function generationView(r: RequestRecord): z.output<typeof generationSchema> {
  return {
    id: r.id,
    endpoint: r.endpoint,
    model: r.model,
    requested_model: r.requestedModel,
    provider: r.provider,
    key_id: r.keyId,
    project_id: r.projectId,
    status: r.status,
    http_status: r.httpStatus,
    error: r.errorCode ? { code: r.errorCode, message: r.errorMessage } : null,
    stream: r.stream,
    usage: {
      prompt_tokens: r.promptTokens,
      completion_tokens: r.completionTokens,
      cached_tokens: r.cachedTokens,
    },
    cost_micros: r.costMicros,
    cost_usd: microsToUsdNumber(r.costMicros),
    saved_micros: r.savedMicros,
    saved_usd: microsToUsdNumber(r.savedMicros),
    overrun_micros: r.overrunMicros ?? 0,
    waived: r.waived,
    byok: r.byok,
    cache_hit: r.cacheHit,
    preset: r.preset,
    ttft_ms: r.ttftMs,
    duration_ms: r.durationMs,
    finish_reason: r.finishReason,
    attempts: r.attempts,
    routing: { failures: r.routingFailures },
    attachments: r.attachments,
    guardrails: r.guardrails,
    metadata: r.metadata,
    created_at: new Date(r.createdAt).toISOString(),
  };
}

/** `GET /v1/generation?id=req_…`: one request of the caller's account, with its failover trail. */
export const generationRoute = defineRoute({
  method: 'GET',
  path: '/v1/generation',
  operationId: 'getGeneration',
  summary: "One request of the caller's account by id, with attempts and the failover trail",
  tag: 'Usage',
  access: 'any',
  query: z.object({ id: z.string().min(1, 'is required (a req_… id)') }),
  responses: { 200: { description: 'The request record', schema: z.object({ data: generationSchema }) } },
  async handle({ query, auth, deps }) {
    const record = hasNul(query.id) ? null : await deps.storage.getRequestRecord(auth.account.id, query.id);
    if (!record) throw new GatewayError('not_found', `No request "${query.id}" on this account.`);
    return deps.jsonResponse({ data: generationView(record) });
  },
});
