import type { Storage } from '@tollgate/core';
import { type GatewayConfig, parseGatewayConfig } from '@tollgate/core';
import { startGatewayUnderTest } from './gateway-under-test.js';
import { describeOnEachVariant } from './start-e2e-gateway.js';
import type { OpenedStorage, StorageVariant } from './storage-variants.js';
import type { Tenant, TenantOptions } from './tenant.js';

export { createTenant, type Tenant, type TenantOptions } from './tenant.js';

/** The deployment default rpm of the test catalogue: distinct from 600, so a test sees it is applied. */
export const TEST_DEFAULT_RPM = 321;

/**
 * A small catalogue: `acme/fast` has a keyed provider first and a keyless one second (so the
 * endpoints listing shows config order and availability); `other/keyless` has only the keyless one.
 */
export const testConfig: GatewayConfig = parseGatewayConfig({
  providers: {
    keyed: { format: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-upstream-test' },
    keyless: {
      format: 'anthropic',
      base_url: 'http://127.0.0.1:9/anthropic/v1',
      api_key_env: 'TOLLGATE_E2E_UNSET_PROVIDER_KEY',
    },
  },
  models: [
    {
      id: 'acme/fast',
      name: 'Acme Fast',
      context_length: 128000,
      max_output_tokens: 4096,
      capabilities: { tools: true },
      endpoints: [
        {
          provider: 'keyed',
          upstream_model: 'fast-1',
          pricing: { prompt: '0.15', completion: '0.60', cached_prompt: '0.075' },
        },
        {
          provider: 'keyless',
          upstream_model: 'fast-1-mirror',
          pricing: { prompt: '0.2', completion: '0.8' },
        },
      ],
    },
    {
      id: 'other/keyless',
      max_output_tokens: 1000,
      endpoints: [{ provider: 'keyless', upstream_model: 'k-1', pricing: { prompt: '3', completion: '15' } }],
    },
  ],
  defaults: { rate_limit_rpm: TEST_DEFAULT_RPM },
  billing: { top_up_fee_percent: '5' },
});

export interface TestGateway {
  /** The server's origin, e.g. `http://127.0.0.1:43121`, or the in-process gateway's (`call` reaches both). */
  url: string;
  storage: Storage;
  opened: OpenedStorage;
  /** A fresh account with keys (default: $10 credit, live keys). */
  newTenant(options?: TenantOptions): Promise<Tenant>;
  /** Closes the server or the gateway, and the storage, then removes the database. */
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** `false`: in-process, requests straight to `gateway.fetch` (default: the real Node server). */
  serve?: boolean;
  /** Gateway `maxBodyBytes`. */
  maxBodyBytes?: number;
  /** An already opened storage (e.g. a SQLite file a CLI also writes). Default: `variant.open()`. */
  opened?: OpenedStorage;
}

/**
 * The shared builder's gateway on the test catalogue over `variant`'s storage, served by the real
 * Node server unless `serve` is `false`.
 */
export function startTestGateway(
  variant: StorageVariant | undefined,
  options: TestGatewayOptions = {},
): Promise<TestGateway> {
  const { opened } = options;
  return startGatewayUnderTest({
    config: testConfig,
    open: opened ? async () => opened : () => variant!.open(),
    gateway: {
      defaultRateLimitRpm: testConfig.defaults.rate_limit_rpm,
      ...(options.maxBodyBytes !== undefined && { maxBodyBytes: options.maxBodyBytes }),
    },
    serve: options.serve ?? true,
  });
}

/**
 * Declares `body` once per storage variant, each with its own gateway started before the first test
 * and torn down after the last. A variant without its prerequisites is skipped with the reason in
 * its title and printed.
 */
export function describeOnEachStorage(
  title: string,
  body: (gw: () => TestGateway, variant: StorageVariant) => void,
  options: Omit<TestGatewayOptions, 'opened'> = {},
): void {
  describeOnEachVariant(title, (variant) => startTestGateway(variant, options), body);
}

/** {@link describeOnEachStorage} with the gateway in-process (`serve: false`). */
export function describeInProcessOnEachStorage(
  title: string,
  body: (gw: () => TestGateway, variant: StorageVariant) => void,
  options: Omit<TestGatewayOptions, 'opened' | 'serve'> = {},
): void {
  describeOnEachStorage(title, body, { ...options, serve: false });
}
