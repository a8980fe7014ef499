import { Field } from '../ui/field.js';
import type { KeyFieldText } from './key-fields.js';

interface Props {
  /** The inputs' test ids are `<prefix>-name`, `<prefix>-limit`, `<prefix>-reset` and `<prefix>-rpm`. */
  testIdPrefix: string;
  fields: KeyFieldText;
  onChange: (fields: KeyFieldText) => void;
  labels: { limit: string; rpm: string };
  placeholders?: { limit: string; rpm: string };
}

/** A key's name, spend limit (with its window) and rate limit inputs, shared by the create and edit forms. */
export function KeyFieldInputs({ testIdPrefix, fields, onChange, labels, placeholders }: Props) {
  const bind = (field: 'name' | 'limit' | 'rpm') => ({
    'data-testid': `${testIdPrefix}-${field}`,
    value: fields[field],
    onInput: (e: { currentTarget: { value: string } }) =>
      onChange({ ...fields, [field]: e.currentTarget.value }),
  });
  return (
    <>
      <Field label="Name" {...bind('name')} />
      <Field label={labels.limit} inputMode="decimal" placeholder={placeholders?.limit} {...bind('limit')} />
      <label>
        Limit resets
        <select
          data-testid={`${testIdPrefix}-reset`}
          value={fields.reset}
          onChange={(e) => onChange({ ...fields, reset: e.currentTarget.value as KeyFieldText['reset'] })}
        >
          <option value="">never (lifetime)</option>
          <option value="daily">daily (UTC)</option>
          <option value="weekly">weekly (from Monday, UTC)</option>
          <option value="monthly">monthly (from the 1st, UTC)</option>
        </select>
      </label>
      <Field label={labels.rpm} inputMode="numeric" placeholder={placeholders?.rpm} {...bind('rpm')} />
    </>
  );
}
