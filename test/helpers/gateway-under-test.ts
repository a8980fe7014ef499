import {
  buildCatalogue,
  type Catalogue,
  createGateway,
  type Gateway,
  type GatewayConfig,
  type GatewayLogger,
  type GatewayOptions,
  type Storage,
  type WalkClock,
} from '@tollgate/core';
import { type RunningServer, type StartServerOptions, startServer } from '@tollgate/node-server';
import { createTestGateway, type TestGateway as KitGateway } from '@tollgate/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe } from 'vitest';
// The pooled upstream client `tollgate serve` uses (not exported from the package index).
import { createUndiciHttpClient } from '../../packages/node-server/src/http/undici-http-client.js';
import { type FetchLike, registerInProcessOrigin } from './in-process-origins.js';
import { InstantClock } from './instant-clock.js';
import { MockUpstream } from './mock-upstream.js';
import { type OpenedStorage, openSqlite } from './storage-variants.js';
import { createTenant, type Tenant, type TenantOptions } from './tenant.js';
import { inputOf } from './test-config.js';

/*
 * The one place the tests build a gateway. In-process by default: requests go straight to
 * `gateway.fetch`, so a test of the pipeline pays for no socket and no port. With `serve`, the same
 * gateway is also served by the real Node server (`startServer`) on a loopback port, for the tests
 * of what only the server does (the wire, hang-ups, draining, metrics). Either way `fetch` and
 * `client` reach it, so a suite can switch with one option.
 *
 * Where the upstream is: the catalogue config given the origin of a loopback `MockUpstream` (a real
 * HTTP provider the gateway calls over a socket), or a fixed config whose providers the testing
 * kit's fakes answer (`upstream: 'kit'`, the gateway built by `@tollgate/testing`'s
 * `createTestGateway`), or a fixed config with no upstream at all.
 */

/** A logger that drops every line. */
export const silentLogger: GatewayLogger = { info() {}, warn() {}, error() {} };

export interface GatewayUnderTestOptions<
  O extends OpenedStorage = OpenedStorage,
  C extends WalkClock = InstantClock,
> {
  /**
   * The catalogue config. Given as a function, a loopback `MockUpstream` is started (unless `mock`
   * is given) and the function gets its origin. With `upstream: 'kit'` it must be made by
   * `testConfig` (the kit takes its input).
   */
  config: GatewayConfig | ((mockUrl: string) => GatewayConfig);
  /** `'kit'`: build on `createTestGateway`, every provider answered by its fakes (`kit.upstream(name)`). */
  upstream?: 'kit';
  /** Opens the storage (e.g. a storage variant's `open`); closed and disposed by `close`. Default: a new SQLite file. */
  open?: () => Promise<O>;
  /** Instead of `open`: a store the caller owns (another gateway runs on it too), left open by `close`. */
  storage?: Storage;
  /** Wraps the opened storage before the gateway sees it (e.g. to make `settleRequest` fail). */
  wrapStorage?: (storage: Storage) => Storage;
  /** The gateway's clock (default: a new `InstantClock`: real time, backoff waits recorded, not slept). */
  clock?: C;
  /** The gateway's logger (default: a silent one). */
  logger?: GatewayLogger;
  /** More gateway options (`maxBodyBytes`, `attemptsPerRoute`, `defaultRateLimitRpm`, `otlp`, …). */
  gateway?: Omit<GatewayOptions, 'clock' | 'logger' | 'httpClient'>;
  /** Call upstream through the pooled undici client `tollgate serve` uses (default: the gateway's own). */
  undici?: boolean;
  /** Share a mock with another gateway (default: a new one when `config` is a function, stopped by `close`). */
  mock?: MockUpstream;
  /**
   * Also serve the gateway through the real Node server on a loopback port; `true` or the server's
   * own options (its logger: none unless given). The gateway's `publicUrl` is then the server's
   * address, as `tollgate serve` sets it.
   */
  serve?: boolean | Pick<StartServerOptions, 'metrics' | 'graceMs' | 'logger'>;
}

/** A gateway built for a test, in-process or served, with its storage, clock and upstream. */
export interface GatewayUnderTest<
  O extends OpenedStorage = OpenedStorage,
  C extends WalkClock = InstantClock,
> {
  /**
   * The server's origin when served (e.g. `http://127.0.0.1:43121`), else an origin of its own
   * (`http://gateway-<n>.test`) that `fetchGatewayAt` (and so `call`) sends in-process.
   */
  url: string;
  /** Requests to `url`: over loopback when served, else straight to `gateway.fetch`. */
  fetch: FetchLike;
  gateway: Gateway;
  catalogue: Catalogue;
  /** The storage as opened (unwrapped). */
  storage: Storage;
  opened: O;
  clock: C;
  /** The loopback mock upstream (when `config` was a function), else `null`. */
  mock: MockUpstream | null;
  /** The testing kit's gateway (with `upstream: 'kit'`), else `null`. */
  kit: KitGateway<C> | null;
  /** The real Node server (with `serve`), else `null`. */
  server: RunningServer | null;
  /** A fresh account with credit and keys (default: $10, live keys). */
  newTenant(options?: TenantOptions): Promise<Tenant>;
  /** The official OpenAI SDK pointed at the gateway (`maxRetries: 0`, 20 s timeout unless told). */
  client(key: string, options?: { maxRetries?: number; timeout?: number }): OpenAI;
  /**
   * Releases held streams, closes the server or gateway and the storage (not one given as `storage`),
   * stops an owned mock, removes the database. Safe to call more than once.
   */
  close(): Promise<void>;
}

/**
 * A borrowed store is dumped by whoever opened it: an empty dump here would pass every "never
 * stored" check without reading a row.
 */
async function borrowedDump(): Promise<Buffer> {
  throw new Error('the store was given as `storage`: dump it through the OpenedStorage that opened it');
}

/** Builds the gateway of `options`, in-process, and serves it when `options.serve` says so. */
export async function startGatewayUnderTest<
  O extends OpenedStorage = OpenedStorage,
  C extends WalkClock = InstantClock,
>(options: GatewayUnderTestOptions<O, C>): Promise<GatewayUnderTest<O, C>> {
  const { config } = options;
  const ownsMock = typeof config === 'function' && !options.mock;
  const mock = typeof config === 'function' ? (options.mock ?? (await new MockUpstream().start())) : null;
  const parsed = typeof config === 'function' ? config(mock!.url) : config;
  const clock = options.clock ?? (new InstantClock() as WalkClock as C);
  const httpClient = options.undici ? createUndiciHttpClient() : undefined;
  const serve = options.serve === true ? {} : options.serve || null;
  const ownsStorage = !options.storage;
  let opened: O | undefined;
  let kit: KitGateway<C> | null = null;
  let server: RunningServer | null = null;
  let gateway: Gateway;
  let catalogue: Catalogue;
  const release = async () => {
    if (ownsMock) await mock!.stop();
    await httpClient?.close();
  };
  try {
    opened = options.storage
      ? ({ storage: options.storage, dump: borrowedDump, dispose: async () => {} } as O)
      : await (options.open ?? ((() => openSqlite()) as unknown as () => Promise<O>))();
    const gatewayOptions = {
      ...(serve && { publicUrl: () => server?.url }),
      ...options.gateway,
      logger: options.logger ?? silentLogger,
    };
    if (options.upstream === 'kit') {
      kit = await createTestGateway(inputOf(parsed), {
        storage: opened.storage,
        clock,
        gateway: gatewayOptions,
        ...(options.wrapStorage && { wrapStorage: options.wrapStorage }),
      });
      gateway = kit.gateway;
      catalogue = gateway.catalogue;
    } else {
      catalogue = buildCatalogue(parsed, {});
      const storage = options.wrapStorage ? options.wrapStorage(opened.storage) : opened.storage;
      gateway = createGateway(storage, catalogue, {
        ...gatewayOptions,
        clock,
        ...(httpClient && { httpClient }),
      });
    }
    if (serve) {
      server = await startServer({
        gateway,
        storage: ownsStorage ? opened.storage : undefined,
        port: 0,
        host: '127.0.0.1',
        graceMs: 2_000,
        ...serve,
      });
    }
  } catch (error) {
    await release();
    if (opened && ownsStorage) {
      await opened.storage.close();
      await opened.dispose();
    }
    throw error;
  }
  const openedStorage = opened;
  const { storage } = openedStorage;
  const inProcess = kit ? kit.fetch : (request: Request) => gateway.fetch(request);
  const fetchGateway: FetchLike = server
    ? (input, init) => globalThis.fetch(input, init)
    : (input, init) => inProcess(new Request(input, init));
  const registered = server ? null : registerInProcessOrigin(fetchGateway);
  const url = server ? server.url : registered!.origin;
  let closed: Promise<void> | undefined;
  const close = async () => {
    if (ownsMock) mock!.release();
    registered?.unregister();
    try {
      if (server) await server.close();
      else if (kit) await kit.close();
      else await gateway.close?.();
    } finally {
      try {
        if (!server && ownsStorage) await storage.close();
      } finally {
        await release();
        if (ownsStorage) await openedStorage.dispose();
      }
    }
  };
  return {
    url,
    fetch: fetchGateway,
    gateway,
    catalogue,
    storage,
    opened: openedStorage,
    clock,
    mock,
    kit,
    server,
    newTenant: (tenantOptions) => createTenant(storage, tenantOptions),
    client: (key, clientOptions = {}) =>
      new OpenAI({
        apiKey: key,
        baseURL: `${url}/v1`,
        maxRetries: clientOptions.maxRetries ?? 0,
        timeout: clientOptions.timeout ?? 20_000,
        ...(!server && { fetch: fetchGateway }),
      }),
    close() {
      closed ??= close();
      return closed;
    },
  };
}

/** A storage a suite runs on, skipped (with the reason printed) when its prerequisites are missing. */
interface NamedVariant {
  name: string;
  skipReason?: string;
}

/**
 * Declares `body` once per storage variant (one without its prerequisites is skipped, the reason
 * printed and in the title), each with its own gateway from `start`, started before the first test
 * and closed after the last. `eachTest`, when given, runs before every test (e.g. to reset the mock).
 */
export function describeOnEachVariant<V extends NamedVariant, G extends { close(): Promise<void> }>(
  title: string,
  variants: readonly V[],
  start: (variant: V) => Promise<G>,
  body: (gw: () => G, variant: V) => void,
  eachTest?: (gw: G) => void,
): void {
  for (const variant of variants) {
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
