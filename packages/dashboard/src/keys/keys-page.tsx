import { useState } from 'preact/hooks';
import type { ApiKey, KeyInfo } from '../api/api-types.js';
import { useLoad } from '../api/use-load.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { TableHead } from '../ui/table-head.js';
import { KeyCreateForm } from './key-create-form.js';
import { KeyRow } from './key-row.js';
import { KeySecretPanel } from './key-secret-panel.js';

/**
 * The account's keys. A new key's secret lives only in this page's state: Done, or leaving the
 * page (which unmounts it), drops it from memory and the DOM.
 */
export function KeysPage() {
  const keys = useLoad((api) => api.get<{ data: ApiKey[] }>('/v1/keys'), []);
  // The key this dashboard is signed in with: its row offers no way to lock the session out.
  const signedIn = useLoad((api) => api.get<{ data: KeyInfo }>('/v1/key'), []);
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  return (
    <section>
      <h1>Keys</h1>
      <ErrorBanner message={error ?? keys.error} />
      {created ? (
        <KeySecretPanel name={created.name} secret={created.secret} onDone={() => setCreated(null)} />
      ) : (
        <KeyCreateForm
          onCreated={(key) => {
            setCreated({ name: key.name, secret: key.key });
            keys.reload();
          }}
        />
      )}
      <div class="table-scroll">
        <table class="keys-table">
          <TableHead
            columns={['Name', 'Scope', 'Status', 'Spent / cap', 'Rate limit', 'Created (UTC)', 'Actions']}
            numeric={['Spent / cap', 'Rate limit']}
          />
          <tbody>
            {keys.data?.data.length === 0 && (
              <tr>
                <td colSpan={7} class="muted">
                  No keys yet.
                </td>
              </tr>
            )}
            {keys.data?.data.map((key) => (
              <KeyRow
                key={key.id}
                apiKey={key}
                signedInKeyId={signedIn.data?.data.id}
                onChanged={keys.reload}
                onError={setError}
              />
            ))}
          </tbody>
        </table>
      </div>
      {keys.loading && !keys.data && <p class="muted">Loading…</p>}
    </section>
  );
}
