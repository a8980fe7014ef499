import { type LoadResult, type LoadSpec, runLoad } from './load.js';

/**
 * Complete answers each process of a target gives before its first cell is measured (JSON chat at
 * c=64). A fresh Node process keeps optimising for thousands of requests: V8 tiers a function up
 * once it has run enough, so what counts is requests, not seconds. Measured on a 2-core machine
 * (JSON chat at c=64 in slices of 2 s from a fresh start, `npm run bench`'s own mock): Tollgate on
 * Postgres rose from ~1,400 RPS at 4,000–13,000 answers to ~1,700–1,950 after ~17,000, SQLite to
 * ~1,600 after ~7,000, while the bare proxy levelled off after ~3,000. A count also leaves a fast
 * machine and a slow one at the same point, where a fixed number of seconds gave a slow machine
 * fewer requests. 20,000 answers per process is past every knee seen.
 */
export const WARMUP_ANSWERS_PER_PROCESS = 20_000;

/** The most a warm-up may take, for a target too slow to give its answers sooner. */
export const WARMUP_LIMIT_S = 60;

/**
 * Warms a target up: `spec`'s request at its concurrency until the target has answered
 * `answersPerProcess` × `processes` of them, or `WARMUP_LIMIT_S` passed. Nothing of it is measured;
 * the caller counts its answers and failures with the target's others.
 */
export function warmUp(
  spec: Omit<LoadSpec, 'durationS' | 'answers'>,
  processes: number,
  answersPerProcess: number = WARMUP_ANSWERS_PER_PROCESS,
): Promise<LoadResult> {
  return runLoad({ ...spec, answers: answersPerProcess * processes, durationS: WARMUP_LIMIT_S });
}
