import { Field } from '../ui/field.js';
import type { KeyFieldText } from './key-fields.js';

interface Props {
  /** The inputs' test ids are `<prefix>-name`, `<prefix>-limit` and `<prefix>-rpm`. */
  testIdPrefix: string;
  fields: KeyFieldText;
  onChange: (fields: KeyFieldText) => void;
  labels: { limit: string; rpm: string };
  placeholders?: { limit: string; rpm: string };
}

/** A key's name, spend limit and rate limit inputs, shared by the create and edit forms. */
export function KeyFieldInputs({ testIdPrefix, fields, onChange, labels, placeholders }: Props) {
  const bind = (field: keyof KeyFieldText) => ({
    'data-testid': `${testIdPrefix}-${field}`,
    value: fields[field],
    onInput: (e: { currentTarget: { value: string } }) =>
      onChange({ ...fields, [field]: e.currentTarget.value }),
  });
  return (
    <>
      <Field label="Name" {...bind('name')} />
      <Field label={labels.limit} inputMode="decimal" placeholder={placeholders?.limit} {...bind('limit')} />
      <Field label={labels.rpm} inputMode="numeric" placeholder={placeholders?.rpm} {...bind('rpm')} />
    </>
  );
}
