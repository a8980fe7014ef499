/** One server-sent event of a response body. */
export interface SseEvent {
  /** The `event:` name, or null for an unnamed (message) event. */
  event: string | null;
  data: string;
}

/** Splits an SSE body into events (blank-line separated `event:` / `data:` lines). */
export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (block.trim() === '') continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    events.push({ event, data: data.join('\n') });
  }
  return events;
}

/** Reads a streamed response incrementally, as text. */
export class SseReader {
  text = '';
  done = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  private readonly decoder = new TextDecoder();

  constructor(response: Response) {
    if (!response.body) throw new Error('the response has no body');
    this.reader = response.body.getReader();
  }

  /** Reads until `test(text so far)` holds (or the body ends); returns whether it held. */
  async readUntil(test: (text: string) => boolean): Promise<boolean> {
    while (!test(this.text)) {
      const { done, value } = await this.reader.read();
      if (done) {
        this.done = true;
        return test(this.text);
      }
      this.text += this.decoder.decode(value, { stream: true });
    }
    return true;
  }

  async readAll(): Promise<string> {
    await this.readUntil(() => false);
    return this.text;
  }

  /** The content deltas received so far, concatenated. */
  content(): string {
    return contentOf(parseSse(this.text));
  }
}

/** Concatenated `choices[0].delta.content` of the unnamed `data:` chunks. */
export function contentOf(events: SseEvent[]): string {
  let text = '';
  for (const e of events) {
    if (e.event !== null || e.data === '[DONE]') continue;
    const chunk = JSON.parse(e.data) as { choices?: { delta?: { content?: string | null } }[] };
    for (const choice of chunk.choices ?? []) text += choice.delta?.content ?? '';
  }
  return text;
}

/** The unnamed data events of a stream, parsed (without `[DONE]`). */
// biome-ignore lint/suspicious/noExplicitAny: chunks are read as plain JSON.
export function dataChunks(events: SseEvent[]): any[] {
  return events.filter((e) => e.event === null && e.data !== '[DONE]').map((e) => JSON.parse(e.data));
}
