import type { GatewayConfig } from '@tollgate/core';
import type { RunningServer, StartServerOptions } from '@tollgate/node-server';
import type OpenAI from 'openai';
import {
  describeOnEachVariant as describeOnEach,
  type GatewayUnderTest,
  type GatewayUnderTestOptions,
  startGatewayUnderTest,
} from './gateway-under-test.js';
import type { InstantClock } from './instant-clock.js';
import type { MockUpstream } from './mock-upstream.js';
import { type OpenedStorage, type StorageVariant, storageVariants } from './storage-variants.js';

export { silentLogger } from './gateway-under-test.js';

/** What `startE2eGateway` builds: the builder's options, with the config given the mock's origin. */
export interface E2eGatewayOptions<O extends OpenedStorage>
  extends Omit<GatewayUnderTestOptions<O>, 'config' | 'open' | 'storage' | 'upstream' | 'serve'> {
  /** The catalogue config, given the mock upstream's origin. */
  config: (mockUrl: string) => GatewayConfig;
  /** Opens the storage (e.g. `variant.open`, `openSqlite`); disposed by `close`. */
  open: () => Promise<O>;
  /** More server options (`metrics`). */
  server?: Pick<StartServerOptions, 'metrics'>;
}

/** A real Node server (`startServer` + `createGateway`) on a loopback port, with its mock upstream. */
export interface E2eGateway<O extends OpenedStorage = OpenedStorage>
  extends Omit<GatewayUnderTest<O>, 'mock' | 'server' | 'kit'> {
  mock: MockUpstream;
  clock: InstantClock;
  server: RunningServer;
  client(key: string, options?: { maxRetries?: number; timeout?: number }): OpenAI;
}

/**
 * The shared builder's gateway served by the real Node server, with a loopback mock upstream and
 * the OAuth approve page `tollgate serve` sets.
 */
export async function startE2eGateway<O extends OpenedStorage>(
  options: E2eGatewayOptions<O>,
): Promise<E2eGateway<O>> {
  const { server, ...rest } = options;
  const gw = await startGatewayUnderTest<O>({
    ...rest,
    gateway: { oauth: { approvePage: '/dashboard/authorize' }, ...options.gateway },
    serve: { ...server, ...(options.logger && { logger: options.logger }) },
  });
  return { ...gw, mock: gw.mock!, server: gw.server! };
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
  describeOnEach(title, storageVariants, start, body, eachTest);
}
