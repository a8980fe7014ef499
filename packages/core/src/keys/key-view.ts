import { z } from 'zod';
import { microsToUsdNumber } from '../money/micros.js';
import type { ApiKey } from '../storage/types.js';

/** A key as the API shows it: never the secret, never the hash. */
export const keyViewSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    prefix: z.string(),
    scope: z.enum(['inference', 'provisioning']),
    env: z.enum(['live', 'test']),
    project_id: z.string().nullable(),
    disabled: z.boolean().describe('Refused with 401 key_revoked; true for a revoked key too'),
    revoked: z.boolean().describe('Revoked for good (DELETE): it can never be enabled again'),
    expires_at: z.string().nullable().describe('When the key stops working (OAuth client credentials)'),
    oauth_client_id: z.string().nullable().describe('The OAuth client the key was issued to'),
    spend_limit_usd: z.number().nullable(),
    spend_limit_micros: z.int().nullable(),
    spent_usd: z.number(),
    spent_micros: z.int(),
    rate_limit_rpm: z.int().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'ApiKey' });

/** The API's view of a key (`GET /v1/keys` and the CLI's `key list --json`); times in ISO 8601. */
export function keyView(key: ApiKey): z.output<typeof keyViewSchema> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    scope: key.scope,
    env: key.env,
    project_id: key.projectId,
    disabled: key.disabled,
    revoked: key.revoked,
    expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
    oauth_client_id: key.oauthClientId,
    spend_limit_usd: key.spendLimitMicros === null ? null : microsToUsdNumber(key.spendLimitMicros),
    spend_limit_micros: key.spendLimitMicros,
    spent_usd: microsToUsdNumber(key.spentMicros),
    spent_micros: key.spentMicros,
    rate_limit_rpm: key.rateLimitRpm,
    created_at: new Date(key.createdAt).toISOString(),
  };
}
