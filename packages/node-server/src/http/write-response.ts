import type { ServerResponse } from 'node:http';
import { unreadJsonBody } from './buffered-json-response.js';

/** Bodies up to this many declared bytes are written whole; anything else streams. */
const WHOLE_BODY_LIMIT = 1024 * 1024;

/** Hop-by-hop headers node:http manages itself; copying them from a Response would corrupt framing. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

/**
 * Writes a Web `Response` to a node:http response: status, headers (each `Set-Cookie` kept as its own
 * line), then the body: whole when it declares a small `Content-Length`, otherwise chunk by chunk as
 * the stream yields it (one write per turn of the event loop, see `TurnWriter`). A full socket buffer
 * waits for `drain`; a client that goes away cancels the body stream. A streamed body is never held
 * back beyond the turn of the event loop that produced it.
 */
export async function writeResponse(response: Response, res: ServerResponse, method: string): Promise<void> {
  res.statusCode = response.status;
  if (response.statusText) res.statusMessage = response.statusText;
  writeHeaders(response.headers, res);

  // A JSON answer of `bufferedJsonResponse`: its bytes as built, without reading them back through
  // a stream (asked before `body`, which is made only when something reads it).
  const json = unreadJsonBody(response);
  if (json) {
    if (!res.destroyed) res.end(method === 'HEAD' ? undefined : json);
    return;
  }
  const body = response.body;
  if (!body || method === 'HEAD') {
    await body?.cancel().catch(() => {});
    res.end();
    return;
  }
  // A small body of declared length (a JSON answer) goes out in one write, framed by its length.
  const length = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isSafeInteger(length) && length <= WHOLE_BODY_LIMIT) {
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (!res.destroyed) res.end(bytes);
    return;
  }
  // Event streams should reach the client as soon as they start, before their first event.
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) res.flushHeaders();

  const reader = body.getReader();
  const onClose = () => {
    if (!res.writableFinished) reader.cancel().catch(() => {});
  };
  res.once('close', onClose);
  const out = new TurnWriter(res);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (res.destroyed) {
        // The client left before this chunk could be written: it was never delivered. Cancelling
        // tells the stream so (it settles as a client gone); returning alone would strand it.
        await reader.cancel().catch(() => {});
        return;
      }
      out.add(value);
      if (res.writableNeedDrain) await drained(res);
    }
    out.flush();
    if (!res.destroyed) res.end();
  } catch (error) {
    // The stream failed after the status line went out: the only honest signal left is a cut
    // connection (a chunked body without its terminator), never a silently "complete" body.
    await reader.cancel(error).catch(() => {});
    res.destroy(error instanceof Error ? error : new Error(String(error)));
  } finally {
    res.off('close', onClose);
  }
}

/**
 * A turn's chunks are written at once from this many bytes on, without waiting for the turn's end
 * (node's default high-water mark: a turn that reads a large upstream buffer still sends early).
 */
const TURN_BYTES = 16 * 1024;

/**
 * The chunks a stream yields in one turn of the event loop (the events of one upstream read) leave
 * in ONE write, so one HTTP chunk: gathered until the turn's microtasks are done (`nextTick`),
 * never held past it, and written at once when they reach `TURN_BYTES`. A 300-event SSE answer is
 * then a handful of writes instead of 300, each with its own chunk framing for the client to parse.
 * The body's first chunk is written and sent at once (the time to first token is not a turn's work later).
 * Backpressure is the response's own: the caller waits for `drain` while it `writableNeedDrain`.
 */
class TurnWriter {
  readonly #res: ServerResponse;
  readonly #chunks: Uint8Array[] = [];
  #bytes = 0;
  #scheduled = false;
  #wroteAny = false;

  constructor(res: ServerResponse) {
    this.#res = res;
  }

  add(chunk: Uint8Array): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.byteLength;
    if (!this.#wroteAny) {
      this.#wroteAny = true;
      this.flush();
      // node:http corks the socket on a write until the next tick, which comes only after the
      // stream's later pulls in this turn: the first piece (the first token) leaves now instead.
      const socket = this.#res.socket;
      if (socket?.writableCorked) socket.uncork();
    } else if (this.#bytes >= TURN_BYTES) {
      this.flush();
    } else if (!this.#scheduled) {
      this.#scheduled = true;
      process.nextTick(() => this.flush());
    }
  }

  /** Writes what was gathered (nothing once the response is destroyed). */
  flush(): void {
    this.#scheduled = false;
    if (this.#chunks.length === 0 || this.#res.destroyed) return;
    const data = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#bytes);
    this.#chunks.length = 0;
    this.#bytes = 0;
    this.#res.write(data);
  }
}

function writeHeaders(headers: Headers, res: ServerResponse): void {
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) res.setHeader('set-cookie', cookies);
  headers.forEach((value, name) => {
    if (name === 'set-cookie' || HOP_BY_HOP.has(name)) return;
    res.setHeader(name, value);
  });
}

/** Resolves when the socket can take more data, or when the client has gone away. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}
