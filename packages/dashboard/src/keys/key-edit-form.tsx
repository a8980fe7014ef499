import { useState } from 'preact/hooks';
import type { ApiKey } from '../api/api-types.js';
import { KeyFieldInputs } from './key-field-inputs.js';
import { fieldText, type KeyPatch, parseKeyFields } from './key-fields.js';

interface Props {
  apiKey: ApiKey;
  busy: boolean;
  onSave: (patch: KeyPatch) => void;
  onCancel: () => void;
  onInvalid: (message: string) => void;
}

/** Rename a key and change its limits; an emptied limit field clears that limit. */
export function KeyEditForm({ apiKey, busy, onSave, onCancel, onInvalid }: Props) {
  const [fields, setFields] = useState(() => ({
    name: apiKey.name,
    limit: fieldText(apiKey.spend_limit_usd),
    reset: apiKey.limit_reset ?? ('' as const),
    rpm: fieldText(apiKey.rate_limit_rpm),
  }));

  function submit(event: Event) {
    event.preventDefault();
    const parsed = parseKeyFields(fields, 'The name cannot be empty.');
    if (!parsed.ok) return onInvalid(parsed.message);
    onSave(parsed.value);
  }

  return (
    <form class="edit-form" onSubmit={submit} aria-label={`Edit ${apiKey.name}`}>
      <KeyFieldInputs
        testIdPrefix="key-edit"
        fields={fields}
        onChange={setFields}
        labels={{
          limit: 'Spend limit (USD, empty for none)',
          rpm: 'Rate limit (requests/min, empty for the account default)',
        }}
      />
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
