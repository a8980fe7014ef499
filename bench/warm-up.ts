import { type LoadResult, type LoadSpec, runLoad } from './load.js';

/**
 * Complete answers each process of a target gives before its first cell is measured (JSON chat at
 * c=64). A fresh Node process keeps optimising for thousands of requests, and V8 tiers a function
 * up by how much it has run, so a count of requests (not seconds) leaves a fast machine and a slow
 * one at the same point. On a 2-core machine after the old warm-up (2 s, ~3,000 requests through
 * Tollgate), V8's compiler threads were still busy during the first cell (17 % of a Postgres
 * gateway's samples at json c=1), and a fresh process's RPS at c=64 levelled off after ~7,000
 * answers (the bare proxy after ~3,000). 20,000 per process is well past that.
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
