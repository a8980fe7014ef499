import { setFlagsFromString } from 'node:v8';
import type { StorageTarget } from './open-storage.js';

/*
 * How far V8 lets a serving process's heap grow past what its last full collection left live.
 *
 * Under load V8 sizes the old generation to the allocation rate, not to what is live: a gateway at
 * c=64 kept ~35-50 MB live but let the heap grow to ~140 MB before a full collection, and peaked at
 * 230-285 MB of RSS over the bench. A cap trades CPU for memory: the tighter it is, the more often
 * a full collection runs, its marking on V8's helper threads (at 30 %, one every ~0.3 s at c=64).
 * The default depends on the store, because a SQLite gateway also holds its database in the
 * process (the page cache, and the WAL checkpointer's worker thread with its own V8 isolate,
 * ~15 MB): at 30 % it peaked at 179-194 MB over the bench. A Postgres gateway peaked at 157-160 MB
 * at 30 % and at 175-177 MB at 60 %. 60 % first measured ~6 % more requests on ~10 % less CPU; with
 * the bench's longer warm-up the difference was within noise, and 60 % stays for the RSS it costs
 * nothing against. V8 reads this flag at each full collection, so
 * setting it once the process runs takes effect; heap *size* flags (`--max-old-space-size`) only
 * work on the command line.
 */

/** The store a serving process opens: it sets the default cap. */
export type HeapStore = StorageTarget['kind'];

/** `serve`'s growth cap, in percent of the live heap, when `TOLLGATE_HEAP_GROWING_PERCENT` is unset. */
export const DEFAULT_HEAP_GROWING_PERCENT: Readonly<Record<HeapStore, number>> = {
  sqlite: 30,
  postgres: 60,
};
const FLAG = '--heap-growing-percent';

/** A `TOLLGATE_HEAP_GROWING_PERCENT` that is not a whole number from 0 to 1000. */
export class HeapSettingError extends Error {
  override name = 'HeapSettingError';
}

/**
 * `TOLLGATE_HEAP_GROWING_PERCENT`: a whole number from 0 to 1000; 0 leaves V8 its own heuristics;
 * unset or empty, the store's default. Throws `HeapSettingError`.
 */
export function parseHeapGrowingPercent(value: string | undefined, store: HeapStore): number {
  const text = value?.trim() ?? '';
  if (text === '') return DEFAULT_HEAP_GROWING_PERCENT[store];
  const percent = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(percent >= 0 && percent <= 1000)) {
    throw new HeapSettingError(
      `TOLLGATE_HEAP_GROWING_PERCENT "${value}" is not a whole number from 0 (V8's own sizing) to 1000`,
    );
  }
  return percent;
}

/**
 * Caps the heap's growth at `percent` for the rest of the process, unless it is 0 or node was
 * started with its own `--heap-growing-percent` (the command line wins). Returns the cap applied,
 * or null when V8 keeps its own (or the command line's) sizing.
 */
export function applyHeapGrowingPercent(
  percent: number,
  execArgv: readonly string[] = process.execArgv,
  setFlags: (flags: string) => void = setFlagsFromString,
): number | null {
  if (percent === 0) return null;
  if (execArgv.some((arg) => arg === FLAG || arg.startsWith(`${FLAG}=`))) return null;
  setFlags(`${FLAG}=${percent}`);
  return percent;
}
