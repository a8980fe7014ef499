/**
 * The one seam through which providers reach the network. The core defaults to Web `fetch`; the
 * Node server injects a client on undici's pooled keep-alive connections, which costs far less CPU
 * per upstream call than Node's global `fetch`.
 */
export interface HttpClient {
  request(url: string, init: HttpRequestInit): Promise<HttpResponse>;
}

export interface HttpRequestInit {
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** A response header by case-insensitive name, or null. */
  header(name: string): string | null;
  /** The whole body as text. */
  text(): Promise<string>;
  /** The body as it arrives; read it once, or call `text()`, not both. */
  body(): AsyncIterable<Uint8Array>;
  /** Releases the connection without reading the rest of the body. */
  discard(): Promise<void>;
}

/** An `HttpClient` on the runtime's Web `fetch`. */
export function fetchHttpClient(fetchImpl: typeof fetch = fetch): HttpClient {
  return {
    async request(url, init) {
      const response = await fetchImpl(url, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal: init.signal,
      });
      return {
        status: response.status,
        header: (name) => response.headers.get(name),
        text: () => response.text(),
        body: () => iterateStream(response.body),
        discard: async () => {
          await response.body?.cancel().catch(() => {});
        },
      };
    },
  };
}

async function* iterateStream(stream: ReadableStream<Uint8Array> | null): AsyncIterable<Uint8Array> {
  if (!stream) return;
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}
