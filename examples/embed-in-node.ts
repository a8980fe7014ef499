/**
 * Tollgate as a library: the gateway is one `fetch(request)` function, so any server that speaks
 * Web `Request`/`Response` can host it. Here: plain node:http through Tollgate's own adapter, on a
 * SQLite file, with one provider. Run with `node --import tsx examples/embed-in-node.ts` after
 * `npm install && npm run build`, then call it with the OpenAI SDK at http://127.0.0.1:8788/v1.
 */
import { createServer } from 'node:http';
import {
  buildCatalogue,
  createApiKey,
  createGateway,
  parseGatewayConfig,
  topUpAccount,
} from '@tollgate/core';
import { toNodeHandler } from '@tollgate/node-server';
import { createSqliteStorage } from '@tollgate/storage-sqlite';

const config = parseGatewayConfig({
  providers: {
    openai: { format: 'openai', base_url: 'https://api.openai.com/v1', api_key_env: 'OPENAI_API_KEY' },
  },
  models: [
    {
      id: 'openai/gpt-4o-mini',
      max_output_tokens: 16384,
      capabilities: { tools: true },
      endpoints: [
        {
          provider: 'openai',
          upstream_model: 'gpt-4o-mini',
          pricing: { prompt: '0.15', completion: '0.60', cached_prompt: '0.075' },
        },
      ],
    },
  ],
});

const storage = await createSqliteStorage({ path: './embedded.db' });
const gateway = createGateway(storage, buildCatalogue(config, process.env), {
  defaultRateLimitRpm: config.defaults.rate_limit_rpm,
});

// One customer with $1 of credit and a key capped at $0.50: what a reseller does per end customer.
if ((await storage.countAccounts()) === 0) {
  const account = await storage.createAccount({ name: 'customer' });
  await topUpAccount(storage, account.id, 1_000_000, 0);
  const { secret } = await createApiKey(storage, {
    accountId: account.id,
    name: 'customer key',
    scope: 'inference',
    env: 'live',
    spendLimitMicros: 500_000,
  });
  console.log(`inference key (shown once): ${secret}`);
}

createServer(toNodeHandler(gateway.fetch)).listen(8788, '127.0.0.1', () => {
  console.log('Tollgate embedded on http://127.0.0.1:8788/v1');
});
