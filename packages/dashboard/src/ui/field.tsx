import type { InputHTMLAttributes } from 'preact';

/** A labelled input: the label's text, then the input, inside one `<label>`; other props go to the input. */
export function Field({ label, ...input }: InputHTMLAttributes & { label: string }) {
  return (
    <label>
      {label}
      <input {...input} />
    </label>
  );
}
