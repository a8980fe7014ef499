import { useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import { messageOf } from '../api/use-load.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { downloadRequestsCsv } from './download-csv.js';

const EXPORT_DAYS = [7, 30, 90, 365] as const;

/** Choose a window and download the account's requests of it as CSV. */
export function ExportControl() {
  const api = useApi();
  const [days, setDays] = useState<number>(30);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function download() {
    setBusy(true);
    setError(null);
    try {
      await downloadRequestsCsv(api, days);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="inline-form">
      <label>
        Export requests of the last
        <select
          data-testid="export-days"
          value={String(days)}
          onChange={(e) => setDays(Number(e.currentTarget.value))}
        >
          {EXPORT_DAYS.map((n) => (
            <option key={n} value={String(n)}>
              {n} days
            </option>
          ))}
        </select>
      </label>
      <button type="button" data-testid="export-csv" disabled={busy} onClick={download}>
        {busy ? 'Preparing…' : 'Download CSV'}
      </button>
      <ErrorBanner message={error} />
    </div>
  );
}
