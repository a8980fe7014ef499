import {
  buildCatalogue,
  type Catalogue,
  createGateway,
  type Gateway,
  type GatewayConfig,
  type GatewayLogger,
  type GatewayOptions,
  type Storage,
} from '@tollgate/core';
import { type RunningServer, type StartServerOptions, startServer } from '@tollgate/node-server';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
// The pooled upstream client `tollgate serve` uses (not exported from the package index).
import { createUndiciHttpClient } from '../../packages/node-server/src/http/undici-http-client.js';
import { InstantClock } from './instant-clock.js';
import { MockUpstream } from './mock-upstream.js';
import { type OpenedStorage, type StorageVariant, storageVariants } from './storage-variants.js';
import { createTenant, type Tenant, type TenantOptions } from './tenant.js';

/** A logger that drops every line. */
export const silentLogger: GatewayLogger = { info() {}, warn() {}, error() {} };

/** What `startE2eGateway` builds: the catalogue, the storage and the gateway's own options. */
export interface E2eGatewayOptions<O extends OpenedStorage> {
  /** The catalogue config, given the mock upstream's origin. */
  config: (mockUrl: string) => GatewayConfig;
  /** Opens the storage (e.g. `variant.open`, `openSqlite`); disposed by `close`. */
  open: () => Promise<O>;
  /** The gateway's clock (default: a new `InstantClock`). */
  clock?: InstantClock;
  /** Given to the gateway and the server (default: the gateway gets a silent one, the server its own). */
  logger?: GatewayLogger;
  /** More gateway options (`attemptsPerRoute`, `defaultRateLimitRpm`, `otlp`, …). */
  gateway?: Omit<GatewayOptions, 'clock' | 'logger' | 'httpClient'>;
  /** Wraps the opened storage before the gateway sees it (e.g. to make `settleRequest` fail). */
  wrapStorage?: (storage: Storage) => Storage;
  /** Call upstream through the pooled undici client `tollgate serve` uses (default: the gateway's own). */
  undici?: boolean;
  /** Share a mock with another gateway (default: a new one, stopped by `close`). */
  mock?: MockUpstream;
  /** More server options (`metrics`). */
  server?: Pick<StartServerOptions, 'metrics'>;
}

/** A real Node server (`startServer` + `createGateway`) on a loopback port, with its mock upstream. */
export interface E2eGateway<O extends OpenedStorage = OpenedStorage> {
  /** The server's origin, e.g. `http://127.0.0.1:43121`. */
  url: string;
  /** The storage as opened (unwrapped). */
  storage: Storage;
  opened: O;
  mock: MockUpstream;
  clock: InstantClock;
  catalogue: Catalogue;
  gateway: Gateway;
  server: RunningServer;
  /** A fresh account with credit and keys (default: $10, live keys). */
  newTenant(options?: TenantOptions): Promise<Tenant>;
  /** The official OpenAI SDK pointed at the gateway (`maxRetries: 0`, 20 s timeout unless told). */
  client(key: string, options?: { maxRetries?: number; timeout?: number }): OpenAI;
  /** Releases held streams, closes the server (and storage), stops an owned mock, removes the database. */
  close(): Promise<void>;
}

/** Starts the mock upstream (unless shared), opens the storage and starts the real Node server. */
export async function startE2eGateway<O extends OpenedStorage>(
  options: E2eGatewayOptions<O>,
): Promise<E2eGateway<O>> {
  const mock = options.mock ?? (await new MockUpstream().start());
  const stopMock = async () => {
    if (!options.mock) await mock.stop();
  };
  const catalogue = buildCatalogue(options.config(mock.url), {});
  const clock = options.clock ?? new InstantClock();
  const httpClient = options.undici ? createUndiciHttpClient() : undefined;
  let opened: O | undefined;
  let gateway: Gateway;
  let server: RunningServer | undefined;
  try {
    opened = await options.open();
    const storage = options.wrapStorage ? options.wrapStorage(opened.storage) : opened.storage;
    gateway = createGateway(storage, catalogue, {
      // As `tollgate serve` does: the OAuth issuer is the address the server listens on.
      publicUrl: () => server?.url,
      oauth: { approvePage: '/dashboard/authorize' },
      ...options.gateway,
      logger: options.logger ?? silentLogger,
      clock,
      ...(httpClient && { httpClient }),
    });
    server = await startServer({
      gateway,
      storage: opened.storage,
      port: 0,
      host: '127.0.0.1',
      graceMs: 2_000,
      ...(options.logger && { logger: options.logger }),
      ...options.server,
    });
  } catch (error) {
    await stopMock();
    await httpClient?.close();
    if (opened) {
      await opened.storage.close();
      await opened.dispose();
    }
    throw error;
  }
  const { storage } = opened;
  const openedStorage = opened;
  return {
    url: server.url,
    storage,
    opened,
    mock,
    clock,
    catalogue,
    gateway,
    server,
    newTenant: (tenantOptions) => createTenant(storage, tenantOptions),
    client: (key, clientOptions = {}) =>
      new OpenAI({
        apiKey: key,
        baseURL: `${server.url}/v1`,
        maxRetries: clientOptions.maxRetries ?? 0,
        timeout: clientOptions.timeout ?? 20_000,
      }),
    async close() {
      if (!options.mock) mock.release();
      try {
        await server.close();
      } finally {
        await stopMock();
        await httpClient?.close();
        await openedStorage.dispose();
      }
    },
  };
}

/**
 * Declares `body` once per storage variant (SQLite always; Postgres when `TEST_DATABASE_URL` is
 * set, else skipped with the reason printed and in the title), each with its own gateway from
 * `start`, started before the first test and closed after the last. `eachTest`, when given, runs
 * before every test (e.g. to reset the mock).
 */
export function describeOnEachVariant<G extends { close(): Promise<void> }>(
  title: string,
  start: (variant: StorageVariant) => Promise<G>,
  body: (gw: () => G, variant: StorageVariant) => void,
  eachTest?: (gw: G) => void,
): void {
  for (const variant of storageVariants) {
    const skip = variant.skipReason;
    if (skip) console.info(`[e2e] "${title}" on ${variant.name} is skipped: ${skip}`);
    describe.skipIf(Boolean(skip))(`${title} [${variant.name}]${skip ? ` (skipped: ${skip})` : ''}`, () => {
      let gateway: G | undefined;
      beforeAll(async () => {
        gateway = await start(variant);
      });
      afterAll(async () => {
        await gateway?.close();
      });
      if (eachTest) beforeEach(() => gateway && eachTest(gateway));
      body(() => {
        if (!gateway) throw new Error(`the gateway for "${title}" did not start`);
        return gateway;
      }, variant);
    });
  }
}
