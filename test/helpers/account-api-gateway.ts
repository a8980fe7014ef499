import type { Gateway, GatewayConfig, Storage } from '@tollgate/core';
import { describeOnEachVariant, startGatewayUnderTest } from './gateway-under-test.js';
import { type ApiResponse, type CallInit, call } from './http.js';
import type { InstantClock } from './instant-clock.js';
import { type OpenedStorage, type StorageVariant, storageVariantsWithPglite } from './storage-variants.js';
import type { Tenant, TenantOptions } from './tenant.js';
import { testConfig } from './test-config.js';

/**
 * Providers for the account-feature APIs (BYOK, presets): two keyed HTTP providers and the keyless
 * demo one, which cannot take a BYOK key.
 */
export const accountApiConfig: GatewayConfig = testConfig({
  providers: {
    openai: { format: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-deployment-openai' },
    anthropic: { format: 'anthropic', base_url: 'http://127.0.0.1:9/anthropic/v1', api_key: 'sk-ant-dep' },
    demo: { format: 'demo' },
  },
  models: [
    {
      id: 'acme/fast',
      max_output_tokens: 1000,
      endpoints: [
        { provider: 'openai', upstream_model: 'fast-1', pricing: { prompt: '1', completion: '2' } },
      ],
    },
  ],
});

/** The server secret the gateway seals under, so a test can open what it sealed. */
export const ACCOUNT_API_SECRET = 'e2e-account-api-secret-0123456789abcdef';

/** The gateway in-process (`fetch(new Request(...))`, no server) over one storage. */
export interface AccountApiGateway {
  gateway: Gateway;
  storage: Storage;
  opened: OpenedStorage;
  variant: StorageVariant['name'];
  /** The gateway's clock (real time; move it with `offsetMs`). */
  clock: InstantClock;
  newTenant(options?: TenantOptions): Promise<Tenant>;
  /** One request through `gateway.fetch`; the body is parsed when it is JSON. */
  call(path: string, init?: CallInit): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** The shared builder's gateway on the testing kit, on `variant`'s store and real time; nothing answers upstream. */
async function startAccountApiGateway(variant: StorageVariant): Promise<AccountApiGateway> {
  const gw = await startGatewayUnderTest({
    config: accountApiConfig,
    upstream: 'kit',
    open: () => variant.open(),
    gateway: { serverSecret: ACCOUNT_API_SECRET },
  });
  return {
    gateway: gw.gateway,
    storage: gw.storage,
    opened: gw.opened,
    variant: variant.name,
    clock: gw.clock,
    newTenant: gw.newTenant,
    call: (path, init = {}) => call(gw.url, path, init, gw.fetch),
    close: () => gw.close(),
  };
}

/** Declares `body` once per storage variant, each with its own in-process gateway. */
export function describeAccountApi(title: string, body: (api: () => AccountApiGateway) => void): void {
  describeOnEachVariant(title, storageVariantsWithPglite, startAccountApiGateway, body);
}
