import { GatewayError } from '../../errors/gateway-error.js';
import type { WalkClock } from '../../routing/walk-routes.js';

/** Ends a held call early: a stream breaks off, a call waiting for its provider is abandoned. */
export type CutCall = (reason: GatewayError) => void;

/** The default time in-flight work may run after a drain starts (60 s). */
const DEFAULT_GRACE_MS = 60_000;

export interface DrainOptions {
  /** How long in-flight requests and streams may run, counted from the `drain()` call (default 60 s). */
  graceMs?: number;
  /**
   * Settles once the host has stopped accepting requests (its listener closed). Until then the
   * gateway keeps serving and a moment with nothing in flight does not end the drain. Default:
   * already stopped.
   */
  accepting?: PromiseLike<unknown>;
}

/** What `drain()` did: whether anything had to be cut at the end of the grace, and how many calls. */
export interface DrainOutcome {
  cut: number;
}

/**
 * This gateway's requests in flight and its readiness. A request counts from `fetch` until its
 * answer is ready; a held call (a streamed one included) from its hold until its settle landed.
 * `drain()` makes `/readyz` answer 503 at once and resolves once nothing is in flight — or, when
 * the grace ends first, after cutting every held call (each settles as it ends: a stream as a
 * broken stream charged for what it delivered, a call waiting for its provider uncharged).
 */
export class DrainControl {
  #draining = false;
  #requests = 0;
  readonly #calls = new Set<{ cut: CutCall }>();
  #idleWaiters: (() => void)[] = [];

  constructor(private readonly clock: Pick<WalkClock, 'schedule'>) {}

  /** True from the first `drain()` on. */
  get draining(): boolean {
    return this.#draining;
  }

  /** A request entered `fetch`; `requestEnded()` once its answer is ready. */
  requestStarted(): void {
    this.#requests += 1;
  }

  /** A request's answer is ready (a stream's body is counted by its call). */
  requestEnded(): void {
    this.#requests -= 1;
    this.#wakeIfIdle();
  }

  /** A call that holds credit, in flight until the returned function is called (after its settle). */
  openCall(cut: CutCall): () => void {
    const entry = { cut };
    this.#calls.add(entry);
    return () => {
      if (this.#calls.delete(entry)) this.#wakeIfIdle();
    };
  }

  /** Starts draining (see the class); safe to call again, each call with its own grace. */
  async drain(options: DrainOptions = {}): Promise<DrainOutcome> {
    this.#draining = true;
    let endGrace!: () => void;
    const graceOver = new Promise<'grace over'>((resolve) => {
      endGrace = () => resolve('grace over');
    });
    const cancel = this.clock.schedule(endGrace, options.graceMs ?? DEFAULT_GRACE_MS);
    try {
      if (options.accepting) await Promise.race([options.accepting, graceOver]);
      if ((await Promise.race([this.#idle(() => this.#requests), graceOver])) !== 'grace over') {
        return { cut: 0 };
      }
      const open = [...this.#calls];
      const reason = new GatewayError(
        'shutting_down',
        'The gateway is shutting down and its grace period for requests in flight ended.',
      );
      for (const call of open) {
        try {
          call.cut(reason);
        } catch {
          // A call that cannot be cut any more is settling already.
        }
      }
      // Requests that hold nothing (an upload still arriving) are their host's to close.
      await this.#idle(() => 0);
      return { cut: open.length };
    } finally {
      cancel();
    }
  }

  /** Resolves once no call is open and `requests()` is 0. */
  #idle(requests: () => number): Promise<'idle'> {
    return new Promise((resolve) => {
      const check = () => {
        if (this.#calls.size > 0 || requests() > 0) this.#idleWaiters.push(check);
        else resolve('idle');
      };
      check();
    });
  }

  #wakeIfIdle(): void {
    const waiters = this.#idleWaiters;
    if (waiters.length === 0) return;
    this.#idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
