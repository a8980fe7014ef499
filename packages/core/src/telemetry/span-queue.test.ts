import { describe, expect, it } from 'vitest';
import { randomSpanIds } from './span-ids.js';
import { DropOldestQueue } from './span-queue.js';

describe('DropOldestQueue', () => {
  it('drops the oldest item when full and reports the drop', () => {
    const queue = new DropOldestQueue<number>(3);
    expect([1, 2, 3].map((n) => queue.push(n))).toEqual([false, false, false]);
    expect(queue.push(4)).toBe(true);
    expect(queue.push(5)).toBe(true);
    expect(queue.size).toBe(3);
    expect(queue.take(10)).toEqual([3, 4, 5]);
    expect(queue.size).toBe(0);
  });

  it('takes in order across the wrap-around', () => {
    const queue = new DropOldestQueue<number>(4);
    for (let n = 1; n <= 6; n++) queue.push(n);
    expect(queue.take(2)).toEqual([3, 4]);
    queue.push(7);
    queue.push(8);
    expect(queue.take(4)).toEqual([5, 6, 7, 8]);
  });

  it('never holds more than its capacity', () => {
    const queue = new DropOldestQueue<number>(100);
    for (let n = 0; n < 10_000; n++) queue.push(n);
    expect(queue.size).toBe(100);
    expect(queue.clear()).toBe(100);
    expect(queue.size).toBe(0);
  });

  it('refuses a capacity below one', () => {
    expect(() => new DropOldestQueue(0)).toThrow(RangeError);
  });
});

describe('randomSpanIds', () => {
  it('formats the injected bytes as lower-case hex', () => {
    const ids = randomSpanIds((length) => Uint8Array.from({ length }, (_, i) => 0xa0 + i));
    expect(ids()).toEqual({ traceId: 'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf', spanId: 'a0a1a2a3a4a5a6a7' });
  });

  it('never returns the invalid all-zero id', () => {
    const ids = randomSpanIds((length) => new Uint8Array(length));
    expect(ids()).toEqual({ traceId: `${'0'.repeat(31)}1`, spanId: `${'0'.repeat(15)}1` });
  });
});
