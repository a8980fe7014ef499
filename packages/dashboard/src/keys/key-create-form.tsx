import { useState } from 'preact/hooks';
import { useApi } from '../api/api-context.js';
import type { CreatedApiKey } from '../api/api-types.js';
import { messageOf } from '../api/use-load.js';
import { ErrorBanner } from '../ui/error-banner.js';
import { parseRpmField, parseSpendLimitField } from './key-fields.js';

/** Creates an inference key (`POST /v1/keys`) and hands the answer, secret included, to the page. */
export function KeyCreateForm({ onCreated }: { onCreated: (created: CreatedApiKey) => void }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [limit, setLimit] = useState('');
  const [rpm, setRpm] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const spendLimit = parseSpendLimitField(limit);
    const rateLimit = parseRpmField(rpm);
    if (name.trim() === '') return setError('Give the key a name.');
    if (!spendLimit.ok) return setError(spendLimit.message);
    if (!rateLimit.ok) return setError(rateLimit.message);
    setBusy(true);
    setError(null);
    try {
      const { data } = await api.send<{ data: CreatedApiKey }>('POST', '/v1/keys', {
        name: name.trim(),
        ...(spendLimit.value !== null && { spend_limit_usd: spendLimit.value }),
        ...(rateLimit.value !== null && { rate_limit_rpm: rateLimit.value }),
      });
      setName('');
      setLimit('');
      setRpm('');
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
      <label>
        Name
        <input data-testid="key-create-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Spend limit (USD, optional)
        <input
          data-testid="key-create-limit"
          inputMode="decimal"
          placeholder="none"
          value={limit}
          onInput={(e) => setLimit(e.currentTarget.value)}
        />
      </label>
      <label>
        Rate limit (requests/min, optional)
        <input
          data-testid="key-create-rpm"
          inputMode="numeric"
          placeholder="account default"
          value={rpm}
          onInput={(e) => setRpm(e.currentTarget.value)}
        />
      </label>
      <button type="submit" data-testid="key-create-submit" disabled={busy}>
        Create key
      </button>
    </form>
  );
}
