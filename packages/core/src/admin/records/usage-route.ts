import { z } from 'zod';
import { defineRoute } from '../../http/route.js';
import { microsToUsdNumber } from '../../money/micros.js';
import type { UsageRow } from '../../storage/metering-types.js';

const DAY_MS = 86_400_000;

const totalsSchema = z.object({
  requests: z.int(),
  errors: z.int(),
  prompt_tokens: z.int(),
  completion_tokens: z.int(),
  cached_tokens: z.int(),
  cost_micros: z.int(),
  cost_usd: z.number(),
  saved_micros: z.int(),
  saved_usd: z.number(),
  byok_requests: z.int(),
  cache_hits: z.int(),
});

const usageSchema = z
  .object({
    data: z.object({
      days: z.int(),
      since: z.string(),
      totals: totalsSchema,
      daily: z.array(totalsSchema.extend({ date: z.string() })),
      by_model: z.array(totalsSchema.extend({ model: z.string().nullable() })),
      by_provider: z.array(totalsSchema.extend({ provider: z.string().nullable() })),
    }),
  })
  .meta({ id: 'Usage' });

type Totals = z.output<typeof totalsSchema>;

/** `GET /v1/usage?days=N`: totals, a daily series and breakdowns by model and by provider. */
export const usageRoute = defineRoute({
  method: 'GET',
  path: '/v1/usage',
  operationId: 'getUsage',
  summary: 'Usage over the last N days (1–365): totals, daily series, by model, by provider',
  tag: 'Usage',
  access: 'any',
  query: z.object({
    days: z
      .string()
      .regex(/^\d+$/, 'must be an integer from 1 to 365')
      .transform(Number)
      .pipe(z.int().min(1, 'must be an integer from 1 to 365').max(365, 'must be an integer from 1 to 365'))
      .default(30),
  }),
  responses: { 200: { description: 'Usage of the account', schema: usageSchema } },
  async handle({ query, auth, deps }) {
    const today = Math.floor(deps.now() / DAY_MS);
    const firstDay = today - query.days + 1;
    const rows = await deps.storage.listUsage(auth.account.id, firstDay * DAY_MS);
    const daily = new Map<number, UsageRow[]>();
    for (let day = firstDay; day <= today; day++) daily.set(day, []);
    for (const row of rows) daily.get(row.day)?.push(row);
    return deps.jsonResponse({
      data: {
        days: query.days,
        since: new Date(firstDay * DAY_MS).toISOString(),
        totals: totals(rows),
        daily: [...daily].map(([day, dayRows]) => ({
          date: new Date(day * DAY_MS).toISOString().slice(0, 10),
          ...totals(dayRows),
        })),
        by_model: groupBy(rows, (r) => r.model).map(([model, group]) => ({ model, ...totals(group) })),
        by_provider: groupBy(rows, (r) => r.provider).map(([provider, group]) => ({
          provider,
          ...totals(group),
        })),
      },
    });
  },
});

function totals(rows: readonly UsageRow[]): Totals {
  const sum = (pick: (r: UsageRow) => number) => rows.reduce((n, r) => n + pick(r), 0);
  const cost = sum((r) => r.costMicros);
  const saved = sum((r) => r.savedMicros);
  return {
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    prompt_tokens: sum((r) => r.promptTokens),
    completion_tokens: sum((r) => r.completionTokens),
    cached_tokens: sum((r) => r.cachedTokens),
    cost_micros: cost,
    cost_usd: microsToUsdNumber(cost),
    saved_micros: saved,
    saved_usd: microsToUsdNumber(saved),
    byok_requests: sum((r) => r.byokRequests),
    cache_hits: sum((r) => r.cacheHits),
  };
}

function groupBy<K>(rows: readonly UsageRow[], key: (r: UsageRow) => K): [K, UsageRow[]][] {
  const groups = new Map<K, UsageRow[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group) group.push(row);
    else groups.set(k, [row]);
  }
  return [...groups];
}
