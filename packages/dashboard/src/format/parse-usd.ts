/** A form field's text, checked: its value, or the message that says what is wrong. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** An optional USD amount as typed: empty is null; anything but a positive number is refused with `message`. */
export function parseOptionalUsd(input: string, message: string): Parsed<number | null> {
  const text = input.trim();
  if (text === '') return { ok: true, value: null };
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) return { ok: false, message };
  return { ok: true, value };
}
