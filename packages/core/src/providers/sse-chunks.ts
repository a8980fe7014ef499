import { createParser, type EventSourceMessage } from 'eventsource-parser';

/**
 * What a provider's stream format does with each server-sent event, synchronously: `event` hands
 * the chunks the event becomes to `emit` (none, one or several) and answers `true` for the event
 * that ends the stream (`data: [DONE]`, `message_stop`); it throws to break the stream (an error
 * event, a malformed payload). `end` runs when the events ran out before such an event, and throws
 * if the stream is incomplete without it.
 */
export interface SseConverter<Chunk> {
  event(event: EventSourceMessage, emit: (chunk: Chunk) => void): boolean;
  end(): void;
}

/**
 * Chunks as they arrive, one at a time as any async iterator gives them, and also every chunk the
 * network reads so far already hold, at once and synchronously ({@link takeReadyChunks}): a reader
 * that forwards a stream can then handle all the chunks of one read in one pass instead of one
 * promise round per chunk.
 */
export interface ReadyChunks<Chunk> extends AsyncIterableIterator<Chunk> {
  /**
   * The chunks that need no further read (at most `max`), converted now; a failure among them waits
   * for `next()`.
   */
  takeReady(max?: number): Chunk[];
}

/** `takeReady` of an iterator that has it (the providers' streams), else null (any other iterator). */
export function takeReadyChunks<Chunk>(iterator: AsyncIterator<Chunk>): ((max?: number) => Chunk[]) | null {
  const ready = (iterator as Partial<ReadyChunks<Chunk>>).takeReady;
  return typeof ready === 'function' ? (max) => ready.call(iterator, max) : null;
}

/**
 * `chunks` with `map` applied to each chunk as it is taken, one at a time or by `takeReady` alike:
 * a wrapper of a provider's stream keeps the batching of the stream it wraps (an async generator
 * would hand its reader one chunk per pull). `return()` passes through, releasing the stream.
 */
export function mapChunks<In, Out>(
  chunks: AsyncIterable<In>,
  map: (chunk: In) => Out,
): AsyncIterableIterator<Out> & Partial<Pick<ReadyChunks<Out>, 'takeReady'>> {
  const iterator = chunks[Symbol.asyncIterator]();
  const takeReady = takeReadyChunks(iterator);
  return {
    async next() {
      const step = await iterator.next();
      return step.done ? step : { done: false, value: map(step.value) };
    },
    async return(value?: unknown) {
      await iterator.return?.(value);
      return { done: true, value };
    },
    ...(takeReady && { takeReady: (max?: number) => takeReady(max).map(map) }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * A provider's chunks from its stream's bytes: the bytes parsed into server-sent events by
 * eventsource-parser one network read at a time, each event converted by `converter` when a reader
 * asks for what follows it (never ahead of the reader, so what a converter learns from an event,
 * such as a usage report, is known only once the chunks before it were taken). Chunks converted
 * before a failure are given first, then the failure. Once the stream ends (its last event, a
 * failure, or the reader's `return()`), the bytes are released unread (`return()` on them).
 */
export function sseChunks<Chunk>(
  bytes: AsyncIterable<Uint8Array>,
  converter: SseConverter<Chunk>,
): ReadyChunks<Chunk> {
  return new SseChunkReader(bytes[Symbol.asyncIterator](), converter);
}

class SseChunkReader<Chunk> implements ReadyChunks<Chunk> {
  readonly #reads: AsyncIterator<Uint8Array>;
  readonly #converter: SseConverter<Chunk>;
  readonly #decoder = new TextDecoder();
  readonly #parser = createParser({ onEvent: (event) => this.#events.push(event) });
  #events: EventSourceMessage[] = [];
  #eventAt = 0;
  #chunks: Chunk[] = [];
  #chunkAt = 0;
  readonly #emit = (chunk: Chunk) => {
    this.#chunks.push(chunk);
  };
  /** No more events will be converted (the last one came, or one failed, or the reader left). */
  #stopped = false;
  /** The bytes ran out (every event they held is in `#events`). */
  #drained = false;
  #failure: { error: unknown } | null = null;
  /** The bytes' `return()` once called: the end of the stream is told after it settled. */
  #released: Promise<unknown> | null = null;

  constructor(reads: AsyncIterator<Uint8Array>, converter: SseConverter<Chunk>) {
    this.#reads = reads;
    this.#converter = converter;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<Chunk, undefined>> {
    for (;;) {
      if (this.#chunkAt < this.#chunks.length) return { done: false, value: this.#take() };
      if (this.#failure) {
        const { error } = this.#failure;
        this.#failure = null;
        await this.#released;
        throw error;
      }
      if (this.#stopped) {
        await this.#released;
        return { done: true, value: undefined };
      }
      if (this.#eventAt < this.#events.length) this.#convertNext();
      else if (this.#drained) this.#convertEnd();
      else await this.#read();
    }
  }

  takeReady(max = Number.POSITIVE_INFINITY): Chunk[] {
    while (
      !this.#stopped &&
      this.#eventAt < this.#events.length &&
      this.#chunks.length - this.#chunkAt < max
    ) {
      this.#convertNext();
    }
    const ready = this.#chunks.slice(this.#chunkAt, this.#chunkAt + max);
    this.#taken(ready.length);
    return ready;
  }

  async return(): Promise<IteratorResult<Chunk, undefined>> {
    this.#stop();
    this.#chunks = [];
    this.#chunkAt = 0;
    this.#failure = null;
    await this.#released;
    return { done: true, value: undefined };
  }

  #take(): Chunk {
    const chunk = this.#chunks[this.#chunkAt]!;
    this.#taken(1);
    return chunk;
  }

  /** `count` more chunks were handed out; once all were, the list starts over. */
  #taken(count: number): void {
    this.#chunkAt += count;
    if (this.#chunkAt === this.#chunks.length) {
      this.#chunks = [];
      this.#chunkAt = 0;
    }
  }

  async #read(): Promise<void> {
    // Every event so far was converted (a read is made only then): the next read's events start a
    // new list, so a long stream holds only one read's events at a time.
    this.#events = [];
    this.#eventAt = 0;
    let read: IteratorResult<Uint8Array>;
    try {
      read = await this.#reads.next();
    } catch (error) {
      // The bytes broke off: nothing more to release.
      this.#drained = true;
      this.#stopped = true;
      this.#failure = { error };
      return;
    }
    if (read.done) {
      this.#drained = true;
      this.#parser.feed(this.#decoder.decode());
      // A last event without its terminating blank line still counts (some recordings end that way).
      this.#parser.feed('\n\n');
    } else {
      this.#parser.feed(this.#decoder.decode(read.value, { stream: true }));
    }
  }

  #convertNext(): void {
    const event = this.#events[this.#eventAt++]!;
    try {
      if (this.#converter.event(event, this.#emit)) this.#stop();
    } catch (error) {
      this.#failure = { error };
      this.#stop();
    }
  }

  #convertEnd(): void {
    this.#stopped = true;
    try {
      this.#converter.end();
    } catch (error) {
      this.#failure = { error };
    }
  }

  #stop(): void {
    if (this.#stopped && this.#drained) return;
    this.#stopped = true;
    this.#events = [];
    this.#eventAt = 0;
    if (!this.#drained) {
      this.#drained = true;
      // Releases the connection (`guardedBody` does not wait for it to drain).
      this.#released = this.#reads.return?.().catch(() => {}) ?? null;
    }
  }
}
