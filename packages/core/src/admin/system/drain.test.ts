import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../errors/gateway-error.js';
import { FakeClock } from '../../routing/fake-clock.js';
import { DrainControl } from './drain.js';

/** Lets pending promise callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await flush();
  return done;
}

describe('DrainControl', () => {
  it('resolves at once with nothing in flight, and is draining from then on', async () => {
    const drain = new DrainControl(new FakeClock());
    expect(drain.draining).toBe(false);
    await expect(drain.drain()).resolves.toEqual({ cut: 0 });
    expect(drain.draining).toBe(true);
  });

  it('waits for requests and held calls to end, without cutting them', async () => {
    const clock = new FakeClock();
    const drain = new DrainControl(clock);
    drain.requestStarted();
    const cuts: GatewayError[] = [];
    const leave = drain.openCall((reason) => cuts.push(reason));
    const drained = drain.drain({ graceMs: 10_000 });
    drain.requestEnded();
    expect(await settled(drained)).toBe(false);
    leave();
    await expect(drained).resolves.toEqual({ cut: 0 });
    clock.advance(10_000);
    expect(cuts).toEqual([]);
  });

  it('a moment with nothing in flight does not end it while the host still accepts requests', async () => {
    const drain = new DrainControl(new FakeClock());
    let stopAccepting!: () => void;
    const accepting = new Promise<void>((resolve) => (stopAccepting = resolve));
    const drained = drain.drain({ graceMs: 10_000, accepting });
    expect(await settled(drained)).toBe(false);
    // A request the host accepted during its delay is waited for too.
    drain.requestStarted();
    stopAccepting();
    expect(await settled(drained)).toBe(false);
    drain.requestEnded();
    await expect(drained).resolves.toEqual({ cut: 0 });
  });

  it('at the end of the grace, cuts every held call with 503 shutting_down and resolves once they settled', async () => {
    const clock = new FakeClock();
    const drain = new DrainControl(clock);
    const leaves: (() => void)[] = [];
    const cuts: GatewayError[] = [];
    for (let i = 0; i < 2; i++) {
      leaves.push(drain.openCall((reason) => cuts.push(reason)));
    }
    const drained = drain.drain({ graceMs: 10_000 });
    clock.advance(9_999);
    expect(cuts).toHaveLength(0);
    clock.advance(1);
    await flush();
    expect(cuts.map((c) => [c.status, c.code, c.type])).toEqual([
      [503, 'shutting_down', 'api_error'],
      [503, 'shutting_down', 'api_error'],
    ]);
    expect(await settled(drained)).toBe(false);
    for (const leave of leaves) leave();
    await expect(drained).resolves.toEqual({ cut: 2 });
  });

  it('the grace counts from drain(), also while the host still accepts', async () => {
    const clock = new FakeClock();
    const drain = new DrainControl(clock);
    let cut = 0;
    const leave = drain.openCall(() => {
      cut += 1;
      leave();
    });
    const drained = drain.drain({ graceMs: 5_000, accepting: new Promise(() => {}) });
    clock.advance(5_000);
    await expect(drained).resolves.toEqual({ cut: 1 });
    expect(cut).toBe(1);
  });
});
