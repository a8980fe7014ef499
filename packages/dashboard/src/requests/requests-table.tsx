import type { Generation } from '../api/api-types.js';
import { formatDuration, formatTimestamp } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { requestHref } from '../routing/hash-route.js';
import { TableHead } from '../ui/table-head.js';
import { isFailureStatus } from './request-status.js';

const NUMERIC_COLUMNS = ['Tokens in / out', 'Cost', 'Duration'];

/** One line per request; a click anywhere on it opens the request's detail page. */
export function RequestsTable({ items, keyNames }: { items: Generation[]; keyNames: Map<string, string> }) {
  return (
    <div class="table-scroll">
      <table class="clickable">
        <TableHead
          columns={['Time (UTC)', 'Model', 'Provider', 'Key', 'Status', ...NUMERIC_COLUMNS]}
          numeric={NUMERIC_COLUMNS}
        />
        <tbody>
          {items.map((r) => (
            <tr
              key={r.id}
              data-testid="request-row"
              data-request-id={r.id}
              onClick={() => {
                location.hash = requestHref(r.id);
              }}
            >
              <td class="nowrap">
                <a href={requestHref(r.id)}>{formatTimestamp(r.created_at)}</a>
              </td>
              <td>{r.model ?? r.requested_model ?? '–'}</td>
              <td>{r.provider ?? '–'}</td>
              <td>{r.key_id === null ? '–' : (keyNames.get(r.key_id) ?? r.key_id)}</td>
              <td class={isFailureStatus(r.status) ? 'status-bad' : undefined}>
                {r.status} / {r.http_status}
              </td>
              <td class="num">
                {r.usage.prompt_tokens} / {r.usage.completion_tokens}
              </td>
              <td class="num">{formatMicros(r.cost_micros)}</td>
              <td class="num">{formatDuration(r.duration_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
