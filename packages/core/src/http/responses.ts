import { errorEnvelope, type GatewayError } from '../errors/gateway-error.js';

const encoder = new TextEncoder();

/**
 * What {@link jsonResponse} answers: a `Response` whose body is the JSON bytes it was built from,
 * made without the `ReadableStream` a body normally gets at construction. On Node 20 undici builds
 * that stream (and makes it transferable) for every `Response` with a body, some ten microseconds
 * and several objects for the collector per answer, and a server adapter that writes the bytes
 * ({@link unreadJsonBody}) never reads it. So the stream, and an ordinary `Response` with that body
 * to read it from, are made only when something reads the body; status and headers are this
 * object's own throughout.
 *
 * Outside Node (or in an adapter that reads a response's internal slots instead of its `body`),
 * such an object would be sent without its body: the gateway hands one only to a caller whose
 * request asked for it ({@link acceptUnreadJsonBodies}), everyone else gets an ordinary `Response`
 * ({@link responseForCaller}).
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

  /** An ordinary `Response` with this one's status, headers and body (as far as it is unread). */
  standard(): Response {
    const init = { status: this.status, statusText: this.statusText, headers: this.headers };
    const response = new Response(this.#read ? this.#read.body : this.#bytes, init);
    if (!this.#read) jsonBodies.set(response, this.#bytes);
    return response;
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
    if (!this.#read) return this.standard();
    const init = { status: this.status, statusText: this.statusText, headers: this.headers };
    return new Response(this.#read.clone().body, init);
  }
}

/** The bytes of the ordinary JSON responses handed to callers, until the response is collected. */
const jsonBodies = new WeakMap<Response, Uint8Array>();

/** Requests whose caller writes a JSON answer's bytes itself (see {@link acceptUnreadJsonBodies}). */
const acceptingUnreadBodies = new WeakSet<Request>();

/**
 * A JSON response with its `Content-Length`: a body of known length lets a server adapter write it
 * in one go instead of streaming it chunk by chunk ({@link unreadJsonBody}).
 */
export function jsonResponse(body: unknown, status = 200, headers?: HeadersInit): Response {
  const bytes = encoder.encode(JSON.stringify(body));
  const h = new Headers(headers);
  h.set('Content-Type', 'application/json');
  h.set('Content-Length', String(bytes.byteLength));
  return new BufferedJsonResponse(bytes, status, h);
}

/**
 * The body of a response {@link jsonResponse} built, while nobody has read it: what its stream
 * would yield. A server adapter writes these bytes instead of reading them back through the
 * stream (a `ReadableStream` read to its end, a promise per chunk, one copy more); any other
 * response, or one whose body was used, gives `undefined`.
 */
export function unreadJsonBody(response: Response): Uint8Array | undefined {
  if (response instanceof BufferedJsonResponse) return response.unread();
  return response.bodyUsed ? undefined : jsonBodies.get(response);
}

/**
 * Marks `request` as coming from a server adapter that writes a JSON answer with
 * {@link unreadJsonBody} before it touches `body`, and reads any other body through `body` or the
 * body methods (as Tollgate's Node adapter does): the gateway then answers it with a response whose
 * body stream is made only if something asks for it. Any other caller gets an ordinary `Response`.
 */
export function acceptUnreadJsonBodies(request: Request): void {
  acceptingUnreadBodies.add(request);
}

/** What the gateway hands the caller of `request`: `response`, as an ordinary `Response` unless the caller accepts the other kind. */
export function responseForCaller(request: Request, response: Response): Response {
  if (!(response instanceof BufferedJsonResponse) || acceptingUnreadBodies.has(request)) return response;
  return response.standard();
}

/** The error envelope for a GatewayError, with its extra headers (e.g. Retry-After). */
export function errorResponse(error: GatewayError, requestId: string): Response {
  return jsonResponse(errorEnvelope(error, requestId), error.status, error.headers);
}

/** One server-sent event: `data: …` (with `event: …` first when named) and the blank line. */
export function sseEvent(data: string, event?: string): Uint8Array {
  return encodeText(sseEventText(data, event));
}

/** {@link sseEvent} as text, for events sent together. */
export function sseEventText(data: string, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}

/** UTF-8 bytes of `text`. */
export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The headers of a server-sent event stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
};
