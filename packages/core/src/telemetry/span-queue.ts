/**
 * A fixed-capacity ring buffer that drops its oldest item when full. Push and take are O(1) per
 * item (an array's `shift()` is O(n)), and memory never grows past `capacity` slots.
 */
export class DropOldestQueue<T> {
  private readonly slots: (T | undefined)[];
  private head = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('queue capacity must be a positive integer');
    this.slots = new Array(capacity);
  }

  get size(): number {
    return this.count;
  }

  /** Adds an item; returns true when the oldest item was dropped to make room. */
  push(item: T): boolean {
    const tail = (this.head + this.count) % this.capacity;
    this.slots[tail] = item;
    if (this.count < this.capacity) {
      this.count += 1;
      return false;
    }
    this.head = (this.head + 1) % this.capacity;
    return true;
  }

  /** Removes and returns up to `max` items, oldest first. */
  take(max: number): T[] {
    const n = Math.min(max, this.count);
    const out: T[] = new Array(n);
    for (let i = 0; i < n; i++) {
      out[i] = this.slots[this.head] as T;
      this.slots[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
    }
    this.count -= n;
    return out;
  }

  /** Empties the queue; returns how many items it held. */
  clear(): number {
    const n = this.count;
    this.take(n);
    return n;
  }
}
