import type { RoutingFailure } from '../api/api-types.js';
import { TableHead } from '../ui/table-head.js';

/** The providers tried and refused before the answer (or the final failure), in order. */
export function FailureTrail({ failures }: { failures: RoutingFailure[] }) {
  return (
    <div data-testid="request-failures">
      {failures.length === 0 ? (
        <p class="muted">No failed attempts: the first route answered.</p>
      ) : (
        <div class="table-scroll">
          <table>
            <TableHead columns={['#', 'Provider', 'Status', 'Reason']} />
            <tbody>
              {failures.map((f, i) => (
                <tr key={i}>
                  <td>{i + 1}</td>
                  <td>{f.provider}</td>
                  <td>{f.status ?? 'no answer'}</td>
                  <td>{f.reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
