import { describe, expect, it } from 'vitest';
import { mapChunks, type SseConverter, sseChunks, takeReadyChunks } from './sse-chunks.js';

const encode = (text: string) => new TextEncoder().encode(text);

/** Byte reads as from a socket, counting the reads made and whether the rest was released. */
function reads(pieces: readonly string[], failAfter?: Error) {
  const seen = { reads: 0, released: false };
  async function* generate(): AsyncGenerator<Uint8Array> {
    try {
      for (const piece of pieces) {
        seen.reads++;
        yield encode(piece);
      }
      if (failAfter) throw failAfter;
    } finally {
      seen.released = true;
    }
  }
  return { bytes: generate(), seen };
}

/**
 * A converter of `data: <word>` events: each word becomes a chunk, `two:x` two chunks, `stop` ends
 * the stream, `boom` throws; `converted` lists the events in the order they were converted.
 */
function words(converted: string[] = []): SseConverter<string> & { ended: boolean } {
  return {
    ended: false,
    event(event, emit) {
      converted.push(event.data);
      if (event.data === 'boom') throw new Error('boom');
      if (event.data === 'stop') return true;
      if (event.data.startsWith('two:')) {
        emit(event.data.slice(4));
        emit(event.data.slice(4));
      } else emit(event.data);
      return false;
    },
    end() {
      this.ended = true;
    },
  };
}

const events = (...data: string[]) => data.map((d) => `data: ${d}\n\n`).join('');

describe('sseChunks', () => {
  it('gives chunks one at a time across reads that split events anywhere', async () => {
    const { bytes } = reads(['data: a\n', '\ndata: b\n\nda', 'ta: two:c\n\n']);
    const out: string[] = [];
    for await (const chunk of sseChunks(bytes, words())) out.push(chunk);
    expect(out).toEqual(['a', 'b', 'c', 'c']);
  });

  it('takeReady gives every chunk the reads so far hold, and never reads for it', async () => {
    const { bytes, seen } = reads([events('a', 'b', 'two:c'), events('d')]);
    const chunks = sseChunks(bytes, words());
    expect(await chunks.next()).toEqual({ done: false, value: 'a' });
    expect(chunks.takeReady()).toEqual(['b', 'c', 'c']);
    expect(chunks.takeReady()).toEqual([]);
    expect(seen.reads).toBe(1);
    expect(await chunks.next()).toEqual({ done: false, value: 'd' });
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
  });

  it('takeReady(max) gives at most max chunks, converting no more events than it needs', async () => {
    const converted: string[] = [];
    const chunks = sseChunks(reads([events('a', 'b', 'two:c', 'd')]).bytes, words(converted));
    expect(await chunks.next()).toEqual({ done: false, value: 'a' });
    expect(chunks.takeReady(1)).toEqual(['b']);
    expect(converted).toEqual(['a', 'b']);
    expect(chunks.takeReady(1)).toEqual(['c']);
    expect(chunks.takeReady(2)).toEqual(['c', 'd']);
    expect(chunks.takeReady(2)).toEqual([]);
  });

  it('converts an event only when a reader asks for what follows it', async () => {
    const converted: string[] = [];
    const chunks = sseChunks(reads([events('a', 'b', 'c')]).bytes, words(converted));
    await chunks.next();
    expect(converted).toEqual(['a']);
    chunks.takeReady();
    expect(converted).toEqual(['a', 'b', 'c']);
  });

  it('gives the chunks before a failing event, then its error, and releases the rest', async () => {
    const { bytes, seen } = reads([events('a', 'boom', 'b'), events('c')]);
    const chunks = sseChunks(bytes, words());
    expect(await chunks.next()).toEqual({ done: false, value: 'a' });
    expect(chunks.takeReady()).toEqual([]);
    await expect(chunks.next()).rejects.toThrow('boom');
    expect(seen).toEqual({ reads: 1, released: true });
    expect(await chunks.next()).toEqual({ done: true, value: undefined });
  });

  it('stops at the event that ends the stream, converting nothing after it, and releases the rest', async () => {
    const converted: string[] = [];
    const converter = words(converted);
    const { bytes, seen } = reads([events('a', 'stop', 'b'), events('c')]);
    const out: string[] = [];
    for await (const chunk of sseChunks(bytes, converter)) out.push(chunk);
    expect(out).toEqual(['a']);
    expect(converted).toEqual(['a', 'stop']);
    expect(converter.ended).toBe(false);
    expect(seen).toEqual({ reads: 1, released: true });
  });

  it("runs the converter's end when the bytes run out, a last event without its blank line included", async () => {
    const converter = words();
    const out: string[] = [];
    for await (const chunk of sseChunks(reads(['data: a\n\ndata: b']).bytes, converter)) out.push(chunk);
    expect(out).toEqual(['a', 'b']);
    expect(converter.ended).toBe(true);
  });

  it('throws what end throws, after every chunk', async () => {
    const converter: SseConverter<string> = {
      event: (event, emit) => {
        emit(event.data);
        return false;
      },
      end: () => {
        throw new Error('incomplete');
      },
    };
    const chunks = sseChunks(reads([events('a')]).bytes, converter);
    expect(await chunks.next()).toEqual({ done: false, value: 'a' });
    await expect(chunks.next()).rejects.toThrow('incomplete');
  });

  it('gives the chunks before a broken read, then its error', async () => {
    const broken = new Error('socket hang up');
    const chunks = sseChunks(reads([events('a', 'b')], broken).bytes, words());
    expect(await chunks.next()).toEqual({ done: false, value: 'a' });
    expect(await chunks.next()).toEqual({ done: false, value: 'b' });
    await expect(chunks.next()).rejects.toBe(broken);
  });

  it("a reader's return() releases the bytes before it resolves", async () => {
    const { bytes, seen } = reads([events('a', 'b'), events('c')]);
    for await (const _chunk of sseChunks(bytes, words())) break;
    expect(seen).toEqual({ reads: 1, released: true });
  });
});

describe('takeReadyChunks', () => {
  it("is the iterator's takeReady where it has one, else null", async () => {
    const chunks = sseChunks(reads([events('a', 'b')]).bytes, words());
    const iterator = chunks[Symbol.asyncIterator]();
    await iterator.next();
    expect(takeReadyChunks(iterator)?.()).toEqual(['b']);
    async function* plain() {
      yield 'a';
    }
    expect(takeReadyChunks(plain())).toBeNull();
  });
});

describe('mapChunks', () => {
  it('maps the chunks taken one at a time and by takeReady, keeping the batches of the stream', async () => {
    const { bytes, seen } = reads([events('a', 'b', 'c'), events('d')]);
    const mapped = mapChunks(sseChunks(bytes, words()), (chunk) => chunk.toUpperCase());
    expect(await mapped.next()).toEqual({ done: false, value: 'A' });
    expect(takeReadyChunks(mapped)?.()).toEqual(['B', 'C']);
    expect(seen.reads).toBe(1);
    expect(await mapped.next()).toEqual({ done: false, value: 'D' });
    expect(await mapped.next()).toMatchObject({ done: true });
  });

  it("passes return() through, releasing the stream's bytes", async () => {
    const { bytes, seen } = reads([events('a', 'b'), events('c')]);
    for await (const _chunk of mapChunks(sseChunks(bytes, words()), (chunk) => chunk)) break;
    expect(seen).toEqual({ reads: 1, released: true });
  });

  it('has no takeReady over a stream without one', () => {
    async function* plain() {
      yield 'a';
    }
    expect(takeReadyChunks(mapChunks(plain(), (chunk) => chunk))).toBeNull();
  });
});
