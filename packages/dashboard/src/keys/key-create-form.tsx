import { useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import type { CreatedApiKey } from '../api/api-types.js';
import { messageOf } from '../api/use-load.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { KeyFieldInputs } from './key-field-inputs.js';
import { EMPTY_KEY_FIELDS, parseKeyFields } from './key-fields.js';

/** Creates an inference key (`POST /v1/keys`) and hands the answer, secret included, to the page. */
export function KeyCreateForm({ onCreated }: { onCreated: (created: CreatedApiKey) => void }) {
  const api = useApi();
  const [fields, setFields] = useState(EMPTY_KEY_FIELDS);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const parsed = parseKeyFields(fields, 'Give the key a name.');
    if (!parsed.ok) return setError(parsed.message);
    const { name, spend_limit_usd, limit_reset, rate_limit_rpm } = parsed.value;
    setBusy(true);
    setError(null);
    try {
      const { data } = await api.send<{ data: CreatedApiKey }>('POST', '/v1/keys', {
        name,
        ...(spend_limit_usd !== null && { spend_limit_usd }),
        ...(limit_reset !== null && { limit_reset }),
        ...(rate_limit_rpm !== null && { rate_limit_rpm }),
      });
      setFields(EMPTY_KEY_FIELDS);
      onCreated(data);
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="inline-form" onSubmit={submit} aria-label="Create a key">
      <ErrorBanner message={error} />
      <KeyFieldInputs
        testIdPrefix="key-create"
        fields={fields}
        onChange={setFields}
        labels={{ limit: 'Spend limit (USD, optional)', rpm: 'Rate limit (requests/min, optional)' }}
        placeholders={{ limit: 'none', rpm: 'account default' }}
      />
      <button type="submit" data-testid="key-create-submit" disabled={busy}>
        Create key
      </button>
    </form>
  );
}
