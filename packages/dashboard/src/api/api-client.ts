import { errorMessageOf } from './error-message.js';

/** A refused call: the HTTP status and the message the gateway gave. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** The dashboard's only way out to the network: same-origin `/v1/…` calls with the bearer key. */
export interface ApiClient {
  get<T>(path: string): Promise<T>;
  send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /** A non-JSON answer (the CSV export) as a Blob. */
  getBlob(path: string): Promise<Blob>;
}

export interface ApiClientOptions {
  /** Called with the gateway's message when a call answers 401 (the key was revoked or is wrong). */
  onUnauthorized?: (message: string) => void;
  fetch?: typeof fetch;
}

/** A client that sends `Authorization: Bearer <key>` on every call to the same origin's `/v1`. */
export function createApiClient(key: string, options: ApiClientOptions = {}): ApiClient {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);

  async function call(method: string, path: string, body?: unknown): Promise<Response> {
    if (!path.startsWith('/v1/')) throw new Error(`not an API path: ${path}`);
    const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response: Response;
    try {
      response = await fetchImpl(path, {
        method,
        headers,
        credentials: 'omit',
        cache: 'no-store',
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'The gateway could not be reached.');
    }
    if (response.ok) return response;
    const message = errorMessageOf(await response.json().catch(() => null), response.status);
    if (response.status === 401) options.onUnauthorized?.(message);
    throw new ApiError(response.status, message);
  }

  return {
    async get<T>(path: string) {
      return (await (await call('GET', path)).json()) as T;
    },
    async send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) {
      const response = await call(method, path, body);
      return (response.status === 204 ? undefined : await response.json()) as T;
    },
    async getBlob(path: string) {
      return (await call('GET', path)).blob();
    },
  };
}
