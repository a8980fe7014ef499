export type Field<T> = { ok: true; value: T } | { ok: false; message: string };

/** A spend limit field: empty is no limit (null); otherwise a positive USD amount. */
export function parseSpendLimitField(input: string): Field<number | null> {
  const text = input.trim();
  if (text === '') return { ok: true, value: null };
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) {
    return { ok: false, message: 'Spend limit must be a positive amount in USD, or empty for none.' };
  }
  return { ok: true, value };
}

/** A rate limit field: empty is the account default (null); otherwise whole requests per minute. */
export function parseRpmField(input: string): Field<number | null> {
  const text = input.trim();
  if (text === '') return { ok: true, value: null };
  if (!/^\d+$/.test(text) || Number(text) < 1) {
    return { ok: false, message: 'Rate limit must be a whole number of requests per minute, or empty.' };
  }
  return { ok: true, value: Number(text) };
}

/** The text a number field starts with for a nullable value. */
export function fieldText(value: number | null): string {
  return value === null ? '' : String(value);
}
