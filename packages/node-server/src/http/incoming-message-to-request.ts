import type { IncomingMessage } from 'node:http';

/**
 * Converts a node:http request into a Web `Request` without reading its body: the body is handed
 * over as a `ReadableStream` that pauses the socket when its consumer falls behind. `signal` should
 * abort when the client goes away (see `toNodeHandler`).
 */
export function incomingMessageToRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  const init: RequestInit & { duplex?: 'half' } = {
    method,
    headers: toHeaders(req),
    signal,
  };
  if (hasBody) {
    init.body = bodyStream(req);
    // Required by undici for a streamed request body.
    init.duplex = 'half';
  }
  return new Request(requestUrl(req), init);
}

/** The absolute URL of the request; the Host header names the origin (localhost when unusable). */
function requestUrl(req: IncomingMessage): URL {
  const protocol = (req.socket as { encrypted?: boolean }).encrypted ? 'https:' : 'http:';
  const path = req.url ?? '/';
  try {
    return new URL(path, `${protocol}//${req.headers.host ?? 'localhost'}`);
  } catch {
    return new URL(path.startsWith('/') ? path : `/${path}`, `${protocol}//localhost`);
  }
}

function toHeaders(req: IncomingMessage): Headers {
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
function bodyStream(req: IncomingMessage): ReadableStream<Uint8Array> {
  let finished = false;
  let onData: ((chunk: Buffer) => void) | undefined;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
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
