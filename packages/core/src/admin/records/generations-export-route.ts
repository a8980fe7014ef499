import { z } from 'zod';
import type { GatewayDeps } from '../../gateway-deps.js';
import { pagedStream } from '../../http/paged-stream.js';
import { defineRoute } from '../../http/route.js';
import type { RequestRecord } from '../../storage/metering-types.js';
import type { RecordCursor } from '../../storage/records-export.js';
import type { EpochMs } from '../../storage/scalars.js';
import { EXPORT_HEADER, recordCsvLine } from './records-csv.js';

const DAY_MS = 86_400_000;
/** Records read per storage call while streaming the export. */
const EXPORT_PAGE = 500;

const DAYS_MESSAGE = 'must be an integer from 1 to 365';

/**
 * `GET /v1/generations/export?days=N` (any scope): the account's request records of the last N UTC
 * days (1–365, default 30: the same window as `GET /usage`, today included) as CSV, newest first,
 * streamed a page at a time.
 */
export const generationsExportRoute = defineRoute({
  method: 'GET',
  path: '/v1/generations/export',
  operationId: 'exportGenerations',
  summary: "The account's request records of the last N days (1–365, default 30) as CSV, newest first",
  tag: 'Usage',
  access: 'any',
  query: z.object({
    days: z
      .string()
      .regex(/^\d+$/, DAYS_MESSAGE)
      .transform(Number)
      .pipe(z.int().min(1, DAYS_MESSAGE).max(365, DAYS_MESSAGE))
      .default(30),
  }),
  responses: {
    200: {
      description: 'text/csv; charset=utf-8: a header line, then one line per request record, newest first',
    },
  },
  handle({ query, auth, deps }) {
    const now = deps.now();
    const since = (Math.floor(now / DAY_MS) - query.days + 1) * DAY_MS;
    const date = new Date(now).toISOString().slice(0, 10);
    return new Response(recordsCsvStream(deps, auth.account.id, since), {
      status: 200,
      headers: {
        'content-type': 'text/csv; charset=utf-8',
        'content-disposition': `attachment; filename="tollgate-generations-${date}.csv"`,
        'cache-control': 'no-store',
      },
    });
  },
});

/**
 * The header line, then the records a page at a time as the client reads (pull, no read-ahead),
 * so memory holds one page whatever the size of the export. Keyset paging by `(createdAt, id)`:
 * records written while the export runs are newer than its first page and do not shift it.
 */
function recordsCsvStream(
  deps: Pick<GatewayDeps, 'storage' | 'logger'>,
  accountId: string,
  since: EpochMs,
): ReadableStream<Uint8Array> {
  return pagedStream<RequestRecord, RecordCursor>({
    head: EXPORT_HEADER,
    pageSize: EXPORT_PAGE,
    readPage: (before) =>
      deps.storage.listRequestRecordsPage(accountId, {
        since,
        limit: EXPORT_PAGE,
        ...(before && { before }),
      }),
    cursorOf: (record) => ({ createdAt: record.createdAt, id: record.id }),
    lines: (page) => page.map(recordCsvLine).join(''),
    onError: (error) =>
      deps.logger.error(
        { accountId, err: { name: (error as Error)?.name } },
        'reading request records failed; the export is cut short',
      ),
  });
}
