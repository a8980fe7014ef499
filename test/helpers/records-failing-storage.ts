import type { SettleInput, Storage } from '@tollgate/core';

/**
 * A real storage whose `settleRequest` can be told to throw (before touching the database) for the
 * next N calls. Every other method is the real one.
 */
export class SettleFailures {
  /** How many of the next settles throw. */
  failNext = 0;
  /** Request ids whose settle was made to throw. */
  readonly failedRequestIds: string[] = [];
  /** Request ids of every settle attempted, in order. */
  readonly attempted: string[] = [];

  wrap(storage: Storage): Storage {
    return new Proxy(storage, {
      get: (target, property) => {
        if (property === 'settleRequest') {
          return async (input: SettleInput) => {
            this.attempted.push(input.record.id);
            if (this.failNext > 0) {
              this.failNext -= 1;
              this.failedRequestIds.push(input.record.id);
              throw new Error('injected settle failure (the database went away)');
            }
            return target.settleRequest(input);
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}
