/** The q-quantile (0..1) of the samples, nearest rank; NaN when there are none. */
export function quantile(sorted: Float64Array | number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** A sorted copy, for `quantile`. */
export function sorted(samples: Float64Array | number[]): Float64Array {
  return Float64Array.from(samples).sort();
}

/** Failures by kind (`"500 internal_error"`), with one example message each. */
export class FailureTally {
  readonly counts = new Map<string, { count: number; example: string }>();

  add(kind: string, example: string): void {
    const seen = this.counts.get(kind);
    if (seen) seen.count++;
    else this.counts.set(kind, { count: 1, example: example.slice(0, 240) });
  }

  get total(): number {
    let n = 0;
    for (const { count } of this.counts.values()) n += count;
    return n;
  }

  toJSON(): Record<string, { count: number; example: string }> {
    return Object.fromEntries(this.counts);
  }
}

/** `"<status> <error.code>"` for an error response, from the OpenAI-style envelope when there is one. */
export function describeFailure(status: number, body: string): string {
  try {
    const error = (JSON.parse(body) as { error?: { code?: unknown; type?: unknown } }).error;
    const code = error?.code ?? error?.type;
    if (typeof code === 'string') return `${status} ${code}`;
  } catch {
    // Not JSON: the status alone says it.
  }
  return String(status);
}
