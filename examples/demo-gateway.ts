/**
 * What the embedding examples share: a gateway on an in-memory SQLite database whose one model is
 * answered by the built-in offline `demo` provider (no network, no provider key), and one customer
 * with credit and an inference key. Swap in your own providers and models (see
 * packages/node-server/tollgate.config.example.json) and a database file for real use.
 */
import { pathToFileURL } from 'node:url';
import {
  buildCatalogue,
  createApiKey,
  createGateway,
  type Gateway,
  type GatewayOptions,
  parseGatewayConfig,
  topUpAccount,
} from '@tollgate/core';
import { createSqliteStorage } from '@tollgate/storage-sqlite';

/** The model the examples call. */
export const DEMO_MODEL = 'demo/chat';

const config = parseGatewayConfig({
  providers: { demo: { format: 'demo' } },
  models: [
    {
      id: DEMO_MODEL,
      max_output_tokens: 4096,
      endpoints: [{ provider: 'demo', upstream_model: 'demo', pricing: { prompt: '3', completion: '15' } }],
    },
  ],
});

export interface DemoGateway {
  gateway: Gateway;
  /** An inference key of the demo customer. */
  key: string;
  /** Flushes the gateway and closes the database. */
  close(): Promise<void>;
}

/** What every example's `start` function returns. */
export interface RunningExample {
  /** The OpenAI-compatible base URL, e.g. `http://127.0.0.1:41234/llm/v1`. */
  url: string;
  key: string;
  close(): Promise<void>;
}

/**
 * A gateway with one customer: $1 of credit and an inference key capped at $0.50, what a reseller
 * sets up per end customer. `options` go to `createGateway` (e.g. `basePath`).
 */
export async function createDemoGateway(options: GatewayOptions = {}): Promise<DemoGateway> {
  // A file path (`./tollgate.db`) keeps accounts and the ledger across restarts.
  const storage = await createSqliteStorage({ path: ':memory:' });
  const gateway = createGateway(storage, buildCatalogue(config, process.env), {
    defaultRateLimitRpm: config.defaults.rate_limit_rpm,
    ...options,
  });
  const account = await storage.createAccount({ name: 'customer' });
  await topUpAccount(storage, account.id, 1_000_000, 0);
  const { secret } = await createApiKey(storage, {
    accountId: account.id,
    name: 'customer key',
    scope: 'inference',
    env: 'live',
    spendLimitMicros: 500_000,
  });
  return {
    gateway,
    key: secret,
    close: async () => {
      await gateway.close();
      await storage.close();
    },
  };
}

/** True when `moduleUrl` (an example's `import.meta.url`) is the script node was started with. */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;
}

/** Prints how to call a running example, and closes it on Ctrl-C. */
export function printUsage(name: string, running: RunningExample): void {
  console.log(`${name}: Tollgate at ${running.url}
inference key: ${running.key}

  curl ${running.url}/chat/completions \\
    -H "Authorization: Bearer ${running.key}" -H "Content-Type: application/json" \\
    -d '{"model": "${DEMO_MODEL}", "messages": [{"role": "user", "content": "Hello"}]}'

or with the OpenAI SDK: new OpenAI({ baseURL: '${running.url}', apiKey: '<the key>' })
Ctrl-C stops it.`);
  process.once('SIGINT', () => void running.close().then(() => process.exit(0)));
}
