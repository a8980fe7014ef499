import type { ModelUsage } from '../api/api-types.js';
import { formatPercent } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { TableHead } from '../ui/table-head.js';
import { topModelsByCost } from '../usage/usage-summary.js';

const NUMERIC_COLUMNS = ['Requests', 'Errors', 'Tokens in / out', 'Cost', 'Share'];

/** The ten models that cost the most in the window. */
export function TopModels({ byModel, totalMicros }: { byModel: ModelUsage[]; totalMicros: number }) {
  const top = topModelsByCost(byModel, 10);
  return (
    <div class="table-scroll">
      <table data-testid="top-models">
        <TableHead columns={['Model', ...NUMERIC_COLUMNS]} numeric={NUMERIC_COLUMNS} />
        <tbody>
          {top.length === 0 && (
            <tr>
              <td colSpan={6} class="muted">
                No requests in this window.
              </td>
            </tr>
          )}
          {top.map((m) => (
            <tr key={m.model ?? ''}>
              <td>{m.model ?? '(none)'}</td>
              <td class="num">{m.requests}</td>
              <td class="num">{m.errors}</td>
              <td class="num">
                {m.prompt_tokens} / {m.completion_tokens}
              </td>
              <td class="num">{formatMicros(m.cost_micros)}</td>
              <td class="num">{formatPercent(m.cost_micros, totalMicros)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
