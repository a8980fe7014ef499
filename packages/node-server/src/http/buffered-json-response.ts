import type { JsonResponseMaker } from '@tollgate/core';

/**
 * What {@link bufferedJsonResponse} makes: a `Response` whose body is the JSON bytes it was built
 * from, made without the `ReadableStream` a body normally gets at construction. On Node 20 undici
 * builds that stream (and makes it transferable) for every `Response` with a body, some ten
 * microseconds and several objects for the collector per answer, and this server's adapter writes
 * the bytes ({@link unreadJsonBody}) without reading it. So the stream, and an ordinary `Response`
 * with that body to read it from, are made only when something reads the body; status and headers
 * are this object's own throughout.
 *
 * An adapter that reads a response's internal slots instead of its `body` would send such an
 * object without its body: only the gateway `serve` builds for this server's own adapter makes them
 * (`createGateway({ jsonResponse })`).
 */
class BufferedJsonResponse extends Response {
  readonly #bytes: Uint8Array<ArrayBuffer>;
  /** The ordinary response the body is read from, once something read it. */
  #read: Response | undefined;

  constructor(bytes: Uint8Array<ArrayBuffer>, status: number, headers: Headers) {
    super(null, { status, headers });
    this.#bytes = bytes;
  }

  /** The bytes while nothing has read the body (see {@link unreadJsonBody}). */
  unread(): Uint8Array | undefined {
    return this.#read?.bodyUsed ? undefined : this.#bytes;
  }

  #body(): Response {
    this.#read ??= new Response(this.#bytes);
    return this.#read;
  }

  override get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
    return this.#body().body;
  }
  override get bodyUsed(): boolean {
    return this.#read?.bodyUsed ?? false;
  }
  override arrayBuffer(): Promise<ArrayBuffer> {
    return this.#body().arrayBuffer();
  }
  override blob(): Promise<Blob> {
    return this.#body().blob();
  }
  override bytes(): Promise<Uint8Array<ArrayBuffer>> {
    return this.#body().bytes();
  }
  override formData(): Promise<FormData> {
    return this.#body().formData();
  }
  override json(): Promise<unknown> {
    return this.#body().json();
  }
  override text(): Promise<string> {
    return this.#body().text();
  }
  /**
   * An ordinary `Response` with this one's status, headers and body: over the same bytes while
   * nothing made the body stream, else over a tee of it (as `clone()` does), so that both read it.
   */
  override clone(): Response {
    const init = { status: this.status, statusText: this.statusText, headers: this.headers };
    return new Response(this.#read ? this.#read.clone().body : this.#bytes, init);
  }
}

/** The Node server's JSON response maker (`createGateway({ jsonResponse })`): no body stream until one is asked for. */
export const bufferedJsonResponse: JsonResponseMaker = (bytes, status, headers) =>
  new BufferedJsonResponse(bytes, status, headers);

/**
 * The body of a response {@link bufferedJsonResponse} made, while nobody has read it: what its
 * stream would yield. The adapter writes these bytes instead of reading them back through the
 * stream (a `ReadableStream` read to its end, a promise per chunk, one copy more); any other
 * response, or one whose body was used, gives `undefined`.
 */
export function unreadJsonBody(response: Response): Uint8Array | undefined {
  return response instanceof BufferedJsonResponse ? response.unread() : undefined;
}
