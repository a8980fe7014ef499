import { useState } from 'preact/hooks';
import type { ApiKey } from '../api/api-types.js';
import { fieldText, parseRpmField, parseSpendLimitField } from './key-fields.js';

export interface KeyPatch {
  name: string;
  spend_limit_usd: number | null;
  rate_limit_rpm: number | null;
}

interface Props {
  apiKey: ApiKey;
  busy: boolean;
  onSave: (patch: KeyPatch) => void;
  onCancel: () => void;
  onInvalid: (message: string) => void;
}

/** Rename a key and change its limits; an emptied limit field clears that limit. */
export function KeyEditForm({ apiKey, busy, onSave, onCancel, onInvalid }: Props) {
  const [name, setName] = useState(apiKey.name);
  const [limit, setLimit] = useState(fieldText(apiKey.spend_limit_usd));
  const [rpm, setRpm] = useState(fieldText(apiKey.rate_limit_rpm));

  function submit(event: Event) {
    event.preventDefault();
    const spendLimit = parseSpendLimitField(limit);
    const rateLimit = parseRpmField(rpm);
    if (name.trim() === '') return onInvalid('The name cannot be empty.');
    if (!spendLimit.ok) return onInvalid(spendLimit.message);
    if (!rateLimit.ok) return onInvalid(rateLimit.message);
    onSave({ name: name.trim(), spend_limit_usd: spendLimit.value, rate_limit_rpm: rateLimit.value });
  }

  return (
    <form class="edit-form" onSubmit={submit} aria-label={`Edit ${apiKey.name}`}>
      <label>
        Name
        <input data-testid="key-edit-name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Spend limit (USD, empty for none)
        <input
          data-testid="key-edit-limit"
          inputMode="decimal"
          value={limit}
          onInput={(e) => setLimit(e.currentTarget.value)}
        />
      </label>
      <label>
        Rate limit (requests/min, empty for the account default)
        <input
          data-testid="key-edit-rpm"
          inputMode="numeric"
          value={rpm}
          onInput={(e) => setRpm(e.currentTarget.value)}
        />
      </label>
      <div class="actions">
        <button type="submit" data-testid="key-edit-save" disabled={busy}>
          Save
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
