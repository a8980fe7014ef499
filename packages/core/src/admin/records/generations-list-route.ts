import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { defineRoute } from '../../http/route.js';
import { hasNul, NUL_MESSAGE, storedText } from '../../http/stored-text.js';
import { isMetadataKey, MAX_VALUE_LENGTH } from '../../pipeline/read-labels.js';
import type { RequestStatus } from '../../storage/metering-types.js';
import type { RecordCursor, RequestRecordFilter } from '../../storage/records-export.js';
import { generationSchema, generationView } from './generation-route.js';
import { pageLimitSchema } from './page-query.js';

/** Every `RequestStatus`: the `satisfies` fails to compile when the union gains a member. */
const STATUSES = {
  success: 'success',
  error: 'error',
  refused: 'refused',
  broken_stream: 'broken_stream',
  client_closed: 'client_closed',
  replayed: 'replayed',
  in_progress: 'in_progress',
} as const satisfies { [S in RequestStatus]: S };

/** A filter value compared exactly: no stored id holds a NUL, and Postgres cannot even bind one. */
const exactValue = (what: string) =>
  storedText().min(1, `must be ${what}`).max(2000, 'must be at most 2000 characters').optional();

/** `label=name=value`, split on the first `=`: the name by the metadata key rules, the value as stored. */
const labelSchema = z
  .string()
  .transform((text, ctx) => {
    const at = text.indexOf('=');
    const name = at < 0 ? '' : text.slice(0, at);
    const value = text.slice(at + 1);
    if (at < 0) ctx.addIssue({ code: 'custom', message: 'must be name=value (a metadata label)' });
    else if (!isMetadataKey(name)) {
      ctx.addIssue({ code: 'custom', message: 'name must be 1 to 64 characters of A-Z a-z 0-9 . _ : -' });
    } else if (value.length > MAX_VALUE_LENGTH) {
      ctx.addIssue({ code: 'custom', message: `value must be at most ${MAX_VALUE_LENGTH} characters` });
    } else if (hasNul(value)) ctx.addIssue({ code: 'custom', message: NUL_MESSAGE });
    return { name, value };
  })
  .optional();

const generationsPageSchema = z
  .object({ data: z.array(generationSchema), has_more: z.boolean() })
  .meta({ id: 'GenerationsPage' });

/**
 * `GET /v1/generations?limit=&after=&model=&status=&key_id=&label=` (any scope): the account's
 * request records, newest first, a page at a time, each as `GET /v1/generation` shows it. Filters
 * are exact and ANDed; `after` is the last record id of the previous page.
 */
export const generationsListRoute = defineRoute({
  method: 'GET',
  path: '/v1/generations',
  operationId: 'listGenerations',
  summary: "The account's request records, newest first, filtered by model, status, key or label",
  tag: 'Usage',
  access: 'any',
  query: z.object({
    limit: pageLimitSchema,
    after: z.string().min(1, 'must be a request id (req_…)').optional(),
    model: exactValue('a model id').describe('Matches the model that served or the one asked for'),
    status: z.enum(STATUSES, `must be one of ${Object.keys(STATUSES).join(', ')}`).optional(),
    key_id: exactValue('a key id'),
    label: labelSchema.describe('name=value: records whose metadata holds exactly this pair'),
  }),
  responses: { 200: { description: 'A page of request records', schema: generationsPageSchema } },
  async handle({ query, auth, deps }) {
    const accountId = auth.account.id;
    let before: RecordCursor | undefined;
    if (query.after !== undefined) {
      const record = hasNul(query.after) ? null : await deps.storage.getRequestRecord(accountId, query.after);
      if (!record) {
        throw new GatewayError('invalid_request', `after: no request "${query.after}" on this account.`);
      }
      before = { createdAt: record.createdAt, id: record.id };
    }
    const filter: RequestRecordFilter = {
      ...(query.model !== undefined && { model: query.model }),
      ...(query.status !== undefined && { status: query.status }),
      ...(query.key_id !== undefined && { keyId: query.key_id }),
      ...(query.label !== undefined && { label: query.label }),
    };
    const records = await deps.storage.listRequestRecordsPage(accountId, {
      since: 0,
      limit: query.limit + 1,
      filter,
      ...(before && { before }),
    });
    return deps.jsonResponse({
      data: records.slice(0, query.limit).map(generationView),
      has_more: records.length > query.limit,
    });
  },
});
