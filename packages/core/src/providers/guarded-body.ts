import type { HttpResponse } from './http-client.js';

/**
 * An upstream response body for a stream reader, read one network chunk at a time (so the guard
 * costs nothing per event): an error while reading becomes `onBreak(error)` unless `signal` aborted
 * (an abort stays as it is), and a reader that stops before the end (client gone, an error event, a
 * terminal event) releases the connection. The release is not awaited: it may drain a little of the
 * body, and the reader need not wait for that.
 */
export async function* guardedBody(
  response: HttpResponse,
  signal: AbortSignal,
  onBreak: (error: unknown) => unknown,
): AsyncGenerator<Uint8Array, void, undefined> {
  let complete = false;
  try {
    for await (const bytes of response.body()) yield bytes;
    complete = true;
  } catch (error) {
    throw signal.aborted ? error : onBreak(error);
  } finally {
    if (!complete) {
      Promise.resolve()
        .then(() => response.discard())
        .catch(() => {});
    }
  }
}
