export type QueryValue = string | number | boolean | null | undefined;

/**
 * A query string (`?a=1&b=x`, or `` when empty) from the given params, in their order; empty
 * strings, null and undefined are left out so an unset filter sends nothing.
 */
export function buildQuery(params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined || value === null || value === '') continue;
    search.append(name, String(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
