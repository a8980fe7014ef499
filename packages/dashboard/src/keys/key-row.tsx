import { useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import type { ApiKey } from '../api/api-types.js';
import { messageOf } from '../api/use-load.js';
import { formatTimestamp } from '../format/format-time.js';
import { formatMicros } from '../format/format-usd.js';
import { LimitMeter } from '../ui/limit-meter.js';
import { KeyEditForm } from './key-edit-form.js';
import type { KeyPatch } from './key-fields.js';

interface Props {
  apiKey: ApiKey;
  /** Called after any change so the page reloads the list. */
  onChanged: () => void;
  onError: (message: string | null) => void;
}

/** One key: its spend against the cap, its rate limit, and the actions (edit, disable, revoke). */
export function KeyRow({ apiKey, onChanged, onError }: Props) {
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

  return (
    <tr data-testid="key-row" data-key-id={apiKey.id} class={apiKey.disabled ? 'disabled' : undefined}>
      <td>
        <strong>{apiKey.name}</strong>
        <div class="muted mono">{apiKey.prefix}…</div>
      </td>
      <td>
        {apiKey.scope}
        {apiKey.env === 'test' && <span class="badge">test</span>}
      </td>
      <td>
        <span class={`status ${apiKey.disabled ? 'status-off' : 'status-on'}`} data-testid="key-status">
          {apiKey.disabled ? 'disabled' : 'active'}
        </span>
      </td>
      <td class="num">
        {formatMicros(apiKey.spent_micros)}{' '}
        {apiKey.spend_limit_micros === null ? '(no cap)' : `of ${formatMicros(apiKey.spend_limit_micros)}`}
        {apiKey.spend_limit_micros !== null && (
          <LimitMeter
            spent={apiKey.spent_micros}
            limit={apiKey.spend_limit_micros}
            label="Share of the cap"
          />
        )}
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
            <button
              type="button"
              class="secondary"
              data-testid={apiKey.disabled ? 'key-enable' : 'key-disable'}
              disabled={busy}
              onClick={() => patch({ disabled: !apiKey.disabled })}
            >
              {apiKey.disabled ? 'Enable' : 'Disable'}
            </button>
            <button
              type="button"
              class="danger"
              data-testid="key-revoke"
              onClick={() => setMode('confirm-revoke')}
            >
              Revoke
            </button>
          </div>
        )}
      </td>
    </tr>
  );
}
