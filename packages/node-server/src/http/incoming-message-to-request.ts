import type { IncomingMessage } from 'node:http';

/**
 * Thrown by `incomingMessageToRequest` when something in front of the handler (a body parser such
 * as `express.json()`) already read the request body and left nothing usable in `req.body`.
 */
export class BodyAlreadyReadError extends Error {
  constructor() {
    super(
      'The request body was already read by middleware in front of Tollgate (a body parser such as ' +
        'express.json()) and is not available as req.body. Mount Tollgate before the body parser, or ' +
        'let the parser leave a parsed object, string or Buffer in req.body.',
    );
    this.name = 'BodyAlreadyReadError';
  }
}

/** A node request as a framework may leave it: `req.body` set by a body parser (Express, Connect). */
type MaybeParsedRequest = IncomingMessage & { body?: unknown };

/**
 * Converts a node:http request into a Web `Request` without reading its body: the body is handed
 * over as a `ReadableStream` that pauses the socket when its consumer falls behind. `signal` should
 * abort when the client goes away (see `toNodeHandler`).
 *
 * When middleware already consumed the stream (`express.json()` and friends), the body is rebuilt
 * from `req.body`: a Buffer or string as is, any other value as JSON. With nothing usable there,
 * it throws `BodyAlreadyReadError` rather than hand over a stream that would never end.
 */
export function incomingMessageToRequest(req: MaybeParsedRequest, signal: AbortSignal): Request {
  const headers = toHeaders(req);
  const init: RequestInit & { duplex?: 'half' } = { method: req.method ?? 'GET', headers, signal };
  if (mayCarryBody(req)) {
    if (req.readableEnded || req.readableDidRead) {
      const body = preParsedBody(req, headers);
      if (body !== null) init.body = body;
    } else {
      init.body = bodyStream(req);
      // Required by undici for a streamed request body.
      init.duplex = 'half';
    }
  }
  return new Request(requestUrl(req), init);
}

/**
 * The body a parser left in `req.body`, with `headers` adjusted to describe it (the parser already
 * decoded any `Content-Encoding`, and a re-serialized object has its own length and type). `null`
 * when the request declared no body; throws `BodyAlreadyReadError` when it did and none is left.
 */
function preParsedBody(req: MaybeParsedRequest, headers: Headers): Uint8Array<ArrayBuffer> | string | null {
  const parsed = req.body;
  let body: Uint8Array<ArrayBuffer> | string;
  // A copy: a Buffer may be a view into a larger, shared pool.
  if (parsed instanceof Uint8Array) body = new Uint8Array(parsed);
  else if (typeof parsed === 'string') body = parsed;
  else if (parsed !== undefined && parsed !== null && typeof parsed === 'object') {
    body = JSON.stringify(parsed);
    headers.set('content-type', 'application/json');
  } else if (!declaresBody(req)) {
    return null;
  } else {
    throw new BodyAlreadyReadError();
  }
  headers.delete('content-encoding');
  headers.delete('transfer-encoding');
  headers.set('content-length', String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength));
  return body;
}

/** Whether a Web `Request` of this method may have a body (every method but GET and HEAD). */
export function mayCarryBody(req: IncomingMessage): boolean {
  const method = req.method ?? 'GET';
  return method !== 'GET' && method !== 'HEAD';
}

/** The error a body read fails with when the client left before anything read it. */
export function clientLeftBeforeRead(): Error {
  return new Error('The client closed the connection before the body was read.');
}

/** Whether the request line announced a body (a length above 0, or a chunked transfer). */
function declaresBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && Number(length) !== 0) || req.headers['transfer-encoding'] !== undefined;
}

/** The absolute URL of the request; the Host header names the origin (localhost when unusable). */
export function requestUrl(req: IncomingMessage): URL {
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https:' : 'http:';
  const path = req.url ?? '/';
  try {
    return new URL(path, `${protocol}//${req.headers.host ?? 'localhost'}`);
  } catch {
    return new URL(path.startsWith('/') ? path : `/${path}`, `${protocol}//localhost`);
  }
}

export function toHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    // HTTP/2 pseudo-headers (":path", …) are not headers of the Web request.
    if (value === undefined || name.startsWith(':')) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      try {
        headers.append(name, item);
      } catch {
        // A value node accepted but the Headers class refuses: dropped rather than failing the request.
      }
    }
  }
  return headers;
}

/**
 * The request body as a byte stream with backpressure: the socket is read only while the consumer
 * pulls (a high-water mark of 0 keeps at most one chunk queued). A body nobody reads is left to
 * node:http, which discards it once the response is finished.
 */
export function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  let onData: ((chunk: Buffer) => void) | undefined;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        // Made after the client left (a lazy request's body read late): nothing more will come.
        if (req.destroyed) {
          finished = true;
          controller.error(clientLeftBeforeRead());
          return;
        }
        req.once('end', () => {
          if (finished) return;
          finished = true;
          controller.close();
        });
        req.once('error', (error) => {
          if (finished) return;
          finished = true;
          controller.error(error);
        });
      },
      pull(controller) {
        if (!onData) {
          onData = (chunk: Buffer) => {
            if (finished) return;
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((controller.desiredSize ?? 0) <= 0) req.pause();
          };
          req.on('data', onData);
        }
        req.resume();
      },
      cancel() {
        // The handler does not want the rest (e.g. 413): discard it, but keep the socket so the
        // response can still be written.
        finished = true;
        if (onData) req.off('data', onData);
        req.resume();
      },
    },
    { highWaterMark: 0 },
  );
}
