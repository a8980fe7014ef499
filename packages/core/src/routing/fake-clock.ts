import type { WalkClock } from './walk-routes.js';

/**
 * A clock for tests: time moves only when told. `sleep` advances time by the wait and records it;
 * `advance` fires the timers that fall due. `random` replays the given values in a loop.
 */
export class FakeClock implements WalkClock {
  readonly sleeps: number[] = [];
  private timers: { at: number; fn: () => void; id: number }[] = [];
  private nextId = 0;
  private draws = 0;

  constructor(
    private time = 1_000_000,
    private readonly randoms: number[] = [0.5],
  ) {}

  now(): number {
    return this.time;
  }

  random(): number {
    return this.randoms[this.draws++ % this.randoms.length]!;
  }

  async sleep(ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw signal.reason;
    this.sleeps.push(ms);
    this.advance(ms);
  }

  schedule(fn: () => void, ms: number): () => void {
    const id = this.nextId++;
    this.timers.push({ at: this.time + ms, fn, id });
    return () => {
      this.timers = this.timers.filter((t) => t.id !== id);
    };
  }

  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => t.at <= this.time);
    this.timers = this.timers.filter((t) => t.at > this.time);
    for (const timer of due) timer.fn();
  }
}
