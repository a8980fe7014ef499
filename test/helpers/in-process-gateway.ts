import {
  buildCatalogue,
  createGateway,
  fetchHttpClient,
  type Gateway,
  type GatewayConfig,
  type GatewayOptions,
} from '@tollgate/core';
import { InstantClock } from './instant-clock.js';
import { silentLogger } from './start-e2e-gateway.js';
import { type OpenedStorage, openSqlite } from './storage-variants.js';

/** The gateway in-process on a fresh SQLite file, its upstream a Web `fetch` the test scripts. */
export interface InProcessGateway {
  gateway: Gateway;
  opened: OpenedStorage;
  /** `POST /v1/chat/completions` with a bearer key (none when `null`); a string body is sent as is. */
  chat(body: unknown, key: string | null): Promise<Response>;
  close(): Promise<void>;
}

/**
 * `createGateway` with no server: `gateway.fetch(new Request(...))` is the whole service under
 * test, calling `upstream` for every provider request (real timers, instant backoff waits).
 */
export async function startInProcessGateway(
  config: GatewayConfig,
  upstream: typeof fetch,
  options: Omit<GatewayOptions, 'httpClient'> = {},
): Promise<InProcessGateway> {
  const opened = await openSqlite();
  const gateway = createGateway(opened.storage, buildCatalogue(config, {}), {
    logger: silentLogger,
    clock: new InstantClock(),
    ...options,
    httpClient: fetchHttpClient(upstream),
  });
  return {
    gateway,
    opened,
    chat: (body, key) =>
      gateway.fetch(
        new Request('http://gateway.test/v1/chat/completions', {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
          body: typeof body === 'string' ? body : JSON.stringify(body),
        }),
      ),
    async close() {
      await gateway.close();
      await opened.storage.close();
      await opened.dispose();
    },
  };
}
