import { z } from 'zod';
import { LIMIT_RESETS, limitResetsAt } from '../../metering/limit-windows.js';
import { microsToUsdNumber } from '../../money/micros.js';
import type { ApiKey, EpochMs, KeyWindowSpend, Micros } from '../../storage/types.js';

/** The key's spend against its cap: the window fields every key view carries. */
export const keyLimitFields = {
  limit_reset: z
    .enum(LIMIT_RESETS)
    .nullable()
    .describe('The UTC calendar window the spend limit applies to (null: the lifetime)'),
  limit_remaining: z
    .number()
    .nullable()
    .describe('USD left in the current window, or of the lifetime cap; null without a cap'),
  usage_daily: z.number().describe('USD spent in the current UTC day'),
  usage_weekly: z.number().describe('USD spent in the current UTC week (from Monday)'),
  usage_monthly: z.number().describe('USD spent in the current UTC month'),
  limit_resets_at: z
    .string()
    .nullable()
    .describe('When the current window ends (ISO 8601); null without a reset'),
};

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
    ...keyLimitFields,
    rate_limit_rpm: z.int().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'ApiKey' });

const NO_SPEND: KeyWindowSpend = { dailyMicros: 0, weeklyMicros: 0, monthlyMicros: 0 };

/**
 * The window fields of a key at `now`, from its spend in the day, week and month containing `now`
 * (`Storage.getKeyWindowSpend`; absent = nothing spent).
 */
export function keyLimitView(key: ApiKey, spend: KeyWindowSpend | undefined, now: EpochMs) {
  const windows = spend ?? NO_SPEND;
  const reset = key.limitReset;
  const spent = capSpentMicros(key, windows);
  const cap = key.spendLimitMicros;
  return {
    limit_reset: reset,
    limit_remaining: cap === null ? null : microsToUsdNumber(Math.max(0, cap - spent)),
    usage_daily: microsToUsdNumber(windows.dailyMicros),
    usage_weekly: microsToUsdNumber(windows.weeklyMicros),
    usage_monthly: microsToUsdNumber(windows.monthlyMicros),
    limit_resets_at: reset === null ? null : limitResetsAt(reset, now),
  };
}

/**
 * The spend a key's cap is held against: its lifetime spend, or its spend in the current window of
 * its `limit_reset` (absent window spend = nothing spent).
 */
export function capSpentMicros(key: ApiKey, spend: KeyWindowSpend | undefined): Micros {
  const windows = spend ?? NO_SPEND;
  switch (key.limitReset) {
    case null:
      return key.spentMicros;
    case 'daily':
      return windows.dailyMicros;
    case 'weekly':
      return windows.weeklyMicros;
    case 'monthly':
      return windows.monthlyMicros;
  }
}

/**
 * The API's view of a key (`GET /v1/keys` and the CLI's `key list --json`); times in ISO 8601. The
 * window fields need the key's spend of the windows containing `now`.
 */
export function keyView(
  key: ApiKey,
  spend: KeyWindowSpend | undefined,
  now: EpochMs,
): z.output<typeof keyViewSchema> {
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
    ...keyLimitView(key, spend, now),
    rate_limit_rpm: key.rateLimitRpm,
    created_at: new Date(key.createdAt).toISOString(),
  };
}

/** The views of keys, their window spend read in one storage call. */
export async function keyViews(
  storage: {
    getKeyWindowSpend(keyIds: readonly string[], at: EpochMs): Promise<Map<string, KeyWindowSpend>>;
  },
  keys: readonly ApiKey[],
  now: EpochMs,
): Promise<z.output<typeof keyViewSchema>[]> {
  const spend = await storage.getKeyWindowSpend(
    keys.map((key) => key.id),
    now,
  );
  return keys.map((key) => keyView(key, spend.get(key.id), now));
}
