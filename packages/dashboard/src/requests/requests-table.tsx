import type { Generation } from '../api/api-types.js';
import { formatDuration, formatTimestamp } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { requestHref } from '../routing/hash-route.js';
import { isFailureStatus } from './request-status.js';

/** One line per request; a click anywhere on it opens the request's detail page. */
export function RequestsTable({ items, keyNames }: { items: Generation[]; keyNames: Map<string, string> }) {
  return (
    <div class="table-scroll">
      <table class="clickable">
        <thead>
          <tr>
            <th scope="col">Time (UTC)</th>
            <th scope="col">Model</th>
            <th scope="col">Provider</th>
            <th scope="col">Key</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Tokens in / out
            </th>
            <th scope="col" class="num">
              Cost
            </th>
            <th scope="col" class="num">
              Duration
            </th>
          </tr>
        </thead>
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
