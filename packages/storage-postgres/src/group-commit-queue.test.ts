import { describe, expect, it } from 'vitest';
import { type CallOutcome, GroupCommitQueue, MAX_BATCH } from './group-commit-queue.js';

interface Call {
  account: string;
  n: number;
}

/** A queue whose sender records each batch and answers `n * 10`, failing the calls with a negative `n`. */
function recordingQueue(fail?: Error) {
  const batches: Call[][] = [];
  const queue = new GroupCommitQueue<Call, number>(
    async (calls) => {
      batches.push([...calls]);
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (fail) throw fail;
      return calls.map(
        (call): CallOutcome<number> =>
          call.n < 0 ? { ok: false, error: new Error(`bad ${call.n}`) } : { ok: true, value: call.n * 10 },
      );
    },
    (call) => call.account,
  );
  return { queue, batches };
}

describe('GroupCommitQueue', () => {
  it('sends the calls of one turn as one batch, sorted by account, keeping each account’s order', async () => {
    const { queue, batches } = recordingQueue();
    const calls = [
      { account: 'b', n: 1 },
      { account: 'a', n: 2 },
      { account: 'b', n: 3 },
      { account: 'a', n: 4 },
    ];
    const results = await Promise.all(calls.map((call) => queue.add(call)));
    expect(results).toEqual([10, 20, 30, 40]);
    expect(batches).toEqual([
      [
        { account: 'a', n: 2 },
        { account: 'a', n: 4 },
        { account: 'b', n: 1 },
        { account: 'b', n: 3 },
      ],
    ]);
  });

  it('fails only the call that failed; the others get their results', async () => {
    const { queue } = recordingQueue();
    const settled = await Promise.allSettled([
      queue.add({ account: 'a', n: 1 }),
      queue.add({ account: 'a', n: -2 }),
      queue.add({ account: 'a', n: 3 }),
    ]);
    expect(settled).toEqual([
      { status: 'fulfilled', value: 10 },
      { status: 'rejected', reason: new Error('bad -2') },
      { status: 'fulfilled', value: 30 },
    ]);
  });

  it('fails every call of a batch whose statement failed', async () => {
    const { queue } = recordingQueue(new Error('connection lost'));
    const settled = await Promise.allSettled([
      queue.add({ account: 'a', n: 1 }),
      queue.add({ account: 'b', n: 2 }),
    ]);
    expect(settled.map((s) => s.status === 'rejected' && (s.reason as Error).message)).toEqual([
      'connection lost',
      'connection lost',
    ]);
  });

  it(`sends a batch as soon as it holds ${MAX_BATCH} calls, and calls of later turns in later batches`, async () => {
    const { queue, batches } = recordingQueue();
    const first = Array.from({ length: MAX_BATCH + 1 }, (_, n) => queue.add({ account: 'a', n }));
    expect(batches).toHaveLength(1);
    await Promise.all(first);
    await queue.add({ account: 'a', n: 0 });
    expect(batches.map((batch) => batch.length)).toEqual([MAX_BATCH, 1, 1]);
  });

  it('drain sends what is queued and waits for it', async () => {
    const { queue, batches } = recordingQueue();
    let result: number | undefined;
    void queue.add({ account: 'a', n: 7 }).then((value) => {
      result = value;
    });
    await queue.drain();
    expect(batches).toHaveLength(1);
    expect(result).toBe(70);
  });
});
