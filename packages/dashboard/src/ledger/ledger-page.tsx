import { useApi } from '../api/api-context.js';
import type { LedgerEntry, Page } from '../api/api-types.js';
import { buildQuery } from '../api/query-string.js';
import { usePagedList } from '../api/use-paged-list.js';
import { formatTimestamp } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { requestHref } from '../routing/hash-route.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { ListFooter } from '../ui/list-footer.js';
import { TableHead } from '../ui/table-head.js';
import { ExportControl } from './export-control.js';

/** The account's ledger, newest first, 50 entries at a time, and the CSV export of requests. */
export function LedgerPage() {
  const api = useApi();
  const ledger = usePagedList(
    (after) => api.get<Page<LedgerEntry>>(`/v1/ledger${buildQuery({ limit: 50, after })}`),
    [],
  );

  return (
    <section>
      <h1>Ledger</h1>
      <ExportControl />
      <ErrorBanner message={ledger.error} />
      <div class="table-scroll">
        <table>
          <TableHead
            columns={['Time (UTC)', 'Kind', 'Amount', 'Balance after', 'Request', 'Description']}
            numeric={['Amount', 'Balance after']}
          />
          <tbody>
            {ledger.items.map((entry) => (
              <tr key={entry.id} data-testid="ledger-row" data-ledger-id={entry.id}>
                <td class="nowrap">{formatTimestamp(entry.created_at)}</td>
                <td>{entry.kind}</td>
                <td class={`num ${entry.amount_micros < 0 ? 'debit' : 'credit'}`}>
                  {formatMicros(entry.amount_micros)}
                </td>
                <td class="num">{formatMicros(entry.balance_after_micros)}</td>
                <td class="mono">
                  {entry.request_id ? <a href={requestHref(entry.request_id)}>{entry.request_id}</a> : '–'}
                </td>
                <td>{entry.description}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ListFooter list={ledger} emptyText="The ledger is empty." moreTestId="ledger-more" />
    </section>
  );
}
