import { useState } from 'preact/hooks';
import type { ApiKey } from '../api/api-types.js';
import { Field } from '../ui/field.js';
import { parseLabelFilter } from './label-filter.js';
import { REQUEST_STATUSES } from './request-status.js';

/** The filters as the list query takes them; empty strings filter nothing. */
export interface RequestFilters {
  model: string;
  status: string;
  keyId: string;
  /** `name=value`, checked. */
  label: string;
}

export const NO_FILTERS: RequestFilters = { model: '', status: '', keyId: '', label: '' };

interface Props {
  keys: ApiKey[];
  onApply: (filters: RequestFilters) => void;
  onInvalid: (message: string | null) => void;
}

/** The filter form: model, status, key and one metadata label. */
export function RequestFiltersForm({ keys, onApply, onInvalid }: Props) {
  const [draft, setDraft] = useState<RequestFilters>(NO_FILTERS);
  const set = (field: keyof RequestFilters) => (e: { currentTarget: { value: string } }) =>
    setDraft({ ...draft, [field]: e.currentTarget.value });
  const bind = (field: keyof RequestFilters) => ({ value: draft[field], onInput: set(field) });

  function submit(event: Event) {
    event.preventDefault();
    const label = parseLabelFilter(draft.label);
    if (!label.ok) return onInvalid(label.message);
    onInvalid(null);
    onApply({ ...draft, model: draft.model.trim(), label: label.value ?? '' });
  }

  return (
    <form class="inline-form" onSubmit={submit} aria-label="Filter requests">
      <Field label="Model" data-testid="filter-model" placeholder="e.g. openai/gpt-4o" {...bind('model')} />
      <label>
        Status
        <select data-testid="filter-status" value={draft.status} onChange={set('status')}>
          <option value="">any</option>
          {REQUEST_STATUSES.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </label>
      <label>
        Key
        <select data-testid="filter-key" value={draft.keyId} onChange={set('keyId')}>
          <option value="">any</option>
          {keys.map((key) => (
            <option key={key.id} value={key.id}>
              {key.name} ({key.prefix}…)
            </option>
          ))}
        </select>
      </label>
      <Field label="Label" data-testid="filter-label" placeholder="name=value" {...bind('label')} />
      <button type="submit" data-testid="filter-apply">
        Apply
      </button>
    </form>
  );
}
