import { z } from 'zod';
import { jsonResponse } from '../../http/responses.js';
import { defineRoute } from '../../http/route.js';
import { microsToUsdNumber } from '../../money/micros.js';
import { rateLimitOf } from '../../protections/rate-limit.js';
import type { Micros } from '../../storage/types.js';
import { keyLimitFields, keyLimitView } from './key-view.js';

const limitSchema = z.object({
  spent_usd: z.number(),
  spent_micros: z.int(),
  limit_usd: z.number().nullable(),
  limit_micros: z.int().nullable(),
  remaining_usd: z.number().nullable(),
  remaining_micros: z.int().nullable(),
});

const keyInfoSchema = z
  .object({
    data: z.object({
      id: z.string(),
      name: z.string(),
      prefix: z.string(),
      scope: z.enum(['inference', 'provisioning']),
      account_id: z.string(),
      balance_usd: z.number(),
      balance_micros: z.int(),
      key_spend: limitSchema,
      ...keyLimitFields,
      month_to_date: limitSchema.extend({ month: z.string().describe('UTC calendar month, YYYY-MM') }),
      rate_limit: z.object({
        requests_per_minute: z.int(),
        source: z.enum(['key', 'account', 'default']),
      }),
    }),
  })
  .meta({ id: 'KeyInfo' });

/** `GET /v1/key`: what the gateway checks on the way in, for the calling key (any scope). */
export const keyInfoRoute = defineRoute({
  method: 'GET',
  path: '/v1/key',
  operationId: 'getCurrentKey',
  summary: 'Balance, key spend against its cap, month-to-date against the ceiling, and the rate limit',
  tag: 'Keys',
  access: 'any',
  responses: { 200: { description: 'The calling key', schema: keyInfoSchema } },
  async handle({ auth, deps }) {
    const { key, account } = auth;
    const now = deps.now();
    const [monthSpent, windows] = await Promise.all([
      deps.storage.getMonthToDateSpend(account.id, now),
      deps.storage.getKeyWindowSpend([key.id], now),
    ]);
    const { rpm, source } = rateLimitOf(auth, deps.defaultRateLimitRpm);
    const rateLimit = { requests_per_minute: rpm, source };
    return jsonResponse({
      data: {
        id: key.id,
        name: key.name,
        prefix: key.prefix,
        scope: key.scope,
        account_id: account.id,
        balance_usd: microsToUsdNumber(account.balanceMicros),
        balance_micros: account.balanceMicros,
        key_spend: limitView(key.spentMicros, key.spendLimitMicros),
        ...keyLimitView(key, windows.get(key.id), now),
        month_to_date: {
          ...limitView(monthSpent, account.monthlyLimitMicros),
          month: new Date(now).toISOString().slice(0, 7),
        },
        rate_limit: rateLimit,
      },
    });
  },
});

function limitView(spent: Micros, limit: Micros | null) {
  const remaining = limit === null ? null : Math.max(0, limit - spent);
  return {
    spent_usd: microsToUsdNumber(spent),
    spent_micros: spent,
    limit_usd: limit === null ? null : microsToUsdNumber(limit),
    limit_micros: limit,
    remaining_usd: remaining === null ? null : microsToUsdNumber(remaining),
    remaining_micros: remaining,
  };
}
