import { useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import type { ApiKey } from '../api/api-types.js';
import { messageOf } from '../api/use-load.js';
import { formatTimestamp } from '../format/format-time.js';
import { KeyEditForm } from './key-edit-form.js';
import type { KeyPatch } from './key-fields.js';
import { KeySpend } from './key-spend.js';
import { keyActions, keyStatus } from './key-status.js';

interface Props {
  apiKey: ApiKey;
  /** The id of the key the dashboard is signed in with; `undefined` until known. */
  signedInKeyId: string | undefined;
  /** Called after any change so the page reloads the list. */
  onChanged: () => void;
  onError: (message: string | null) => void;
}

/**
 * One key: its spend against the cap, its rate limit, and the actions (edit, disable or enable,
 * revoke) it allows: none for a revoked key but edit, neither disable nor revoke for the signed-in key.
 */
export function KeyRow({ apiKey, signedInKeyId, onChanged, onError }: Props) {
  const api = useApi();
  const [mode, setMode] = useState<'view' | 'edit' | 'confirm-revoke'>('view');
  const [busy, setBusy] = useState(false);
  const path = `/v1/keys/${encodeURIComponent(apiKey.id)}`;

  async function run(action: () => Promise<unknown>) {
    setBusy(true);
    onError(null);
    try {
      await action();
      setMode('view');
      onChanged();
    } catch (e) {
      onError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }
  const patch = (body: Partial<KeyPatch> & { disabled?: boolean }) =>
    run(() => api.send('PATCH', path, body));
  const status = keyStatus(apiKey, Date.now());
  const actions = keyActions(apiKey, signedInKeyId);
  const self = apiKey.id === signedInKeyId;

  return (
    <tr data-testid="key-row" data-key-id={apiKey.id} class={status === 'active' ? undefined : 'disabled'}>
      <td>
        <strong>{apiKey.name}</strong>
        {self && (
          <span class="badge" data-testid="key-self" title="The key this dashboard is signed in with">
            you
          </span>
        )}
        <div class="muted mono">{apiKey.prefix}…</div>
      </td>
      <td>
        {apiKey.scope}
        {apiKey.env === 'test' && <span class="badge">test</span>}
      </td>
      <td>
        <span class={`status ${status === 'active' ? 'status-on' : 'status-off'}`} data-testid="key-status">
          {status}
        </span>
      </td>
      <td class="num">
        <KeySpend apiKey={apiKey} />
      </td>
      <td class="num">
        {apiKey.rate_limit_rpm === null ? 'account default' : `${apiKey.rate_limit_rpm}/min`}
      </td>
      <td class="nowrap">{formatTimestamp(apiKey.created_at)}</td>
      <td class="row-actions">
        {mode === 'edit' && (
          <KeyEditForm
            apiKey={apiKey}
            busy={busy}
            onSave={(changes) => patch(changes)}
            onCancel={() => setMode('view')}
            onInvalid={onError}
          />
        )}
        {mode === 'confirm-revoke' && (
          <div class="actions">
            <span>Revoke “{apiKey.name}” for good?</span>
            <button
              type="button"
              class="danger"
              data-testid="key-revoke-confirm"
              disabled={busy}
              onClick={() => run(() => api.send('DELETE', path))}
            >
              Yes, revoke
            </button>
            <button type="button" class="secondary" onClick={() => setMode('view')}>
              Cancel
            </button>
          </div>
        )}
        {mode === 'view' && (
          <div class="actions">
            <button type="button" class="secondary" data-testid="key-edit" onClick={() => setMode('edit')}>
              Edit
            </button>
            {actions.toggle && (
              <button
                type="button"
                class="secondary"
                data-testid={`key-${actions.toggle}`}
                disabled={busy}
                onClick={() => patch({ disabled: actions.toggle === 'disable' })}
              >
                {actions.toggle === 'disable' ? 'Disable' : 'Enable'}
              </button>
            )}
            {actions.revoke && (
              <button
                type="button"
                class="danger"
                data-testid="key-revoke"
                onClick={() => setMode('confirm-revoke')}
              >
                Revoke
              </button>
            )}
          </div>
        )}
      </td>
    </tr>
  );
}
