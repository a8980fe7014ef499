import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { hasNul } from '../../http/stored-text.js';
import { microsToUsdNumber } from '../../money/micros.js';
import type { LedgerEntry } from '../../storage/types.js';
import { pageLimitSchema } from './page-query.js';

/** The ledger's kinds as the API names them: storage's `adjustment` is a `correction`. */
const API_KIND = { credit: 'credit', fee: 'fee', charge: 'charge', adjustment: 'correction' } as const;

const ledgerEntrySchema = z
  .object({
    id: z.string(),
    created_at: z.string(),
    amount_micros: z.int(),
    amount_usd: z.number(),
    balance_after_micros: z.int(),
    kind: z.enum(['credit', 'fee', 'charge', 'correction']),
    request_id: z.string().nullable(),
    description: z.string(),
  })
  .meta({ id: 'LedgerEntry' });

const ledgerPageSchema = z
  .object({ data: z.array(ledgerEntrySchema), has_more: z.boolean() })
  .meta({ id: 'LedgerPage' });

/** A ledger entry as `GET /ledger` shows it (money as integer micros, USD formatted from them). */
export function ledgerEntryView(entry: LedgerEntry): z.output<typeof ledgerEntrySchema> {
  return {
    id: entry.id,
    created_at: new Date(entry.createdAt).toISOString(),
    amount_micros: entry.amountMicros,
    amount_usd: microsToUsdNumber(entry.amountMicros),
    balance_after_micros: entry.balanceAfterMicros,
    kind: API_KIND[entry.kind],
    request_id: entry.requestId,
    description: entry.description,
  };
}

/** `GET /v1/ledger?limit=&after=` (any scope): the account's ledger, newest first, a page at a time. */
export const ledgerRoute = defineRoute({
  method: 'GET',
  path: '/v1/ledger',
  operationId: 'listLedger',
  summary:
    "The account's ledger, newest first: credits, fees, charges and corrections with the balance after each",
  tag: 'Usage',
  access: 'any',
  query: z.object({
    limit: pageLimitSchema,
    after: z.string().min(1, 'must be a ledger entry id (led_…)').optional(),
  }),
  responses: { 200: { description: 'A page of the ledger', schema: ledgerPageSchema } },
  async handle({ query, auth, deps }) {
    const page =
      query.after !== undefined && hasNul(query.after)
        ? null
        : await deps.storage.listLedgerPage(auth.account.id, {
            limit: query.limit,
            ...(query.after !== undefined && { after: query.after }),
          });
    if (!page) {
      throw new GatewayError('invalid_request', `after: no ledger entry "${query.after}" on this account.`);
    }
    return deps.jsonResponse({ data: page.entries.map(ledgerEntryView), has_more: page.hasMore });
  },
});
