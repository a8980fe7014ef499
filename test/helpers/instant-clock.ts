import type { WalkClock } from '@tollgate/core';

/**
 * The gateway's clock for end-to-end tests: real time (shifted by `offsetMs`, or a frozen instant
 * when `frozenAt` is set, which then moves only by the waits asked for), real timers (so the
 * per-attempt timeouts really fire), and backoff / `Retry-After` sleeps that return at once but are
 * recorded in `waits`. `random` replays `randoms` in a loop when set, else calls `defaultRandom`.
 *
 * Not `FakeClock` from `@tollgate/core/testing`: that one also fakes the timers of `schedule`, so
 * a real server's per-attempt timeouts would never fire.
 */
export class InstantClock implements WalkClock {
  /** Every backoff wait the gateway asked for (ms), in order. */
  readonly waits: number[] = [];
  /** Added to real time (e.g. to place requests on earlier UTC days). */
  offsetMs = 0;
  /** When set, `now()` returns this instead of real time (and each sleep moves it on). */
  frozenAt: number | null = null;
  /** When set, `random()` replays these in a loop. */
  randoms: number[] | null = null;
  private draws = 0;

  /** `defaultRandom`: the jitter source when `randoms` is unset (default `Math.random`). */
  constructor(private readonly defaultRandom: () => number = Math.random) {}

  now(): number {
    return this.frozenAt ?? Date.now() + this.offsetMs;
  }

  random(): number {
    if (!this.randoms) return this.defaultRandom();
    return this.randoms[this.draws++ % this.randoms.length]!;
  }

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw signal.reason;
    this.waits.push(ms);
    // Frozen time moves only by the waits the gateway asks for (so deadlines can be reached).
    if (this.frozenAt !== null) this.frozenAt += ms;
  }

  schedule(fn: () => void, ms: number): () => void {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  }

  /** Back to real time (no offset) and the default randomness, with no waits recorded. */
  reset(): void {
    this.waits.length = 0;
    this.offsetMs = 0;
    this.frozenAt = null;
    this.randoms = null;
    this.draws = 0;
  }
}
