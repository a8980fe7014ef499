export type LabelFilter = { ok: true; value: string | undefined } | { ok: false; message: string };

/**
 * The label filter as typed (`name=value`) checked and trimmed, ready for `&label=name=value`;
 * undefined when the field is empty. The name may not be empty; the value may hold `=`.
 */
export function parseLabelFilter(input: string): LabelFilter {
  const text = input.trim();
  if (text === '') return { ok: true, value: undefined };
  const at = text.indexOf('=');
  if (at < 0) return { ok: false, message: 'Label filter must be name=value.' };
  const name = text.slice(0, at).trim();
  const value = text.slice(at + 1).trim();
  if (name === '') return { ok: false, message: 'Label filter needs a name before "=".' };
  return { ok: true, value: `${name}=${value}` };
}
