import type { GatewayConfig } from '@tollgate/core';
import type { StartServerOptions } from '@tollgate/node-server';
import {
  describeOnEachVariant as describeOnEach,
  type GatewayUnderTest,
  type GatewayUnderTestOptions,
  startGatewayUnderTest,
} from './gateway-under-test.js';
import type { MockUpstream } from './mock-upstream.js';
import { type OpenedStorage, type StorageVariant, storageVariants } from './storage-variants.js';

export { silentLogger } from './gateway-under-test.js';

/** What `startE2eGateway` builds: the builder's options, with the config given the mock's origin. */
export interface E2eGatewayOptions<O extends OpenedStorage>
  extends Omit<GatewayUnderTestOptions<O>, 'config' | 'open' | 'storage' | 'upstream' | 'serve'> {
  /** `false`: in-process, requests straight to `gateway.fetch` (default: the real Node server). */
  serve?: boolean;
  /** The catalogue config, given the mock upstream's origin. */
  config: (mockUrl: string) => GatewayConfig;
  /** Opens the storage (e.g. `variant.open`, `openSqlite`); disposed by `close`. */
  open: () => Promise<O>;
  /** More server options (`metrics`). */
  server?: Pick<StartServerOptions, 'metrics'>;
}

/** The gateway with its loopback mock upstream, served by the real Node server unless told otherwise. */
export interface E2eGateway<O extends OpenedStorage = OpenedStorage>
  extends Omit<GatewayUnderTest<O>, 'mock' | 'kit'> {
  mock: MockUpstream;
}

/**
 * The shared builder's gateway with a loopback mock upstream and the OAuth approve page
 * `tollgate serve` sets, served by the real Node server unless `serve` is `false`.
 */
export async function startE2eGateway<O extends OpenedStorage>(
  options: E2eGatewayOptions<O>,
): Promise<E2eGateway<O>> {
  const { server, serve = true, ...rest } = options;
  const gw = await startGatewayUnderTest<O>({
    ...rest,
    gateway: { oauth: { approvePage: '/dashboard/authorize' }, ...options.gateway },
    serve: serve && { ...server, ...(options.logger && { logger: options.logger }) },
  });
  return { ...gw, mock: gw.mock! };
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
