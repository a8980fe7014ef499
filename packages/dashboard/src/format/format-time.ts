/** An ISO timestamp as a short UTC date and time: `2026-11-24 23:31:55`. */
export function formatTimestamp(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}

/** A duration in milliseconds: `850 ms`, `2.4 s`; `–` when unknown. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return '–';
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A ratio as a percentage with one decimal: `2.5%`; `–` when there is nothing to divide. */
export function formatPercent(part: number, whole: number): string {
  return whole === 0 ? '–' : `${((part / whole) * 100).toFixed(1)}%`;
}
