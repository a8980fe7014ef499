import type { Gateway, GatewayConfig, Storage } from '@tollgate/core';
import { describeOnEachVariant, startGatewayUnderTest } from './gateway-under-test.js';
import { type ApiResponse, type CallInit, call } from './http.js';
import type { InstantClock } from './instant-clock.js';
import { type OpenedStorage, openPostgres, openSqlite } from './storage-variants.js';
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

/** A storage variant of these suites: SQLite and PGlite always, Postgres with `TEST_DATABASE_URL`. */
export interface Variant {
  name: 'sqlite' | 'pglite' | 'postgres';
  skipReason?: string;
  open(): Promise<OpenedStorage>;
}

const databaseUrl = process.env.TEST_DATABASE_URL;

export const accountApiVariants: Variant[] = [
  { name: 'sqlite', open: () => openSqlite() },
  { name: 'pglite', open: openPglite },
  {
    name: 'postgres',
    ...(databaseUrl ? {} : { skipReason: 'TEST_DATABASE_URL is not set' }),
    open: () => openPostgres(databaseUrl!, { everyColumn: true }),
  },
];

/** PGlite in-process; `dump` reads every row of every table as text, straight from the instance. */
export async function openPglite(): Promise<OpenedStorage> {
  const { PGlite } = await import('@electric-sql/pglite');
  const { createPgliteStorage } = await import('@tollgate/storage-postgres');
  const pglite = await PGlite.create();
  const storage = await createPgliteStorage({ pglite: pglite as never });
  return {
    storage,
    async dump() {
      const tables = await pglite.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      const lines: string[] = [];
      for (const { table_name } of tables.rows) {
        const rows = await pglite.query<{ row: string }>(`SELECT t::text AS row FROM "${table_name}" t`);
        for (const { row } of rows.rows) lines.push(row);
      }
      return Buffer.from(lines.join('\n'));
    },
    async dispose() {
      await pglite.close();
    },
  };
}

/** The gateway in-process (`fetch(new Request(...))`, no server) over one storage. */
export interface AccountApiGateway {
  gateway: Gateway;
  storage: Storage;
  opened: OpenedStorage;
  variant: Variant['name'];
  /** The gateway's clock (real time; move it with `offsetMs`). */
  clock: InstantClock;
  newTenant(options?: TenantOptions): Promise<Tenant>;
  /** One request through `gateway.fetch`; the body is parsed when it is JSON. */
  call(path: string, init?: CallInit): Promise<ApiResponse>;
  close(): Promise<void>;
}

/** The shared builder's gateway on the testing kit, on `variant`'s store and real time; nothing answers upstream. */
async function startAccountApiGateway(variant: Variant): Promise<AccountApiGateway> {
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
  describeOnEachVariant(title, accountApiVariants, startAccountApiGateway, body);
}
