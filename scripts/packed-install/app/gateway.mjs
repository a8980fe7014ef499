// What the Express and Hono apps share: a loopback fake provider and a gateway on an in-memory
// SQLite store, built only from the installed @tollgate packages.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import {
  buildCatalogue,
  createApiKey,
  createGateway,
  parseGatewayConfig,
  topUpAccount,
} from '@tollgate/core';
import { createSqliteStorage } from '@tollgate/storage-sqlite';

/** An OpenAI-style provider on 127.0.0.1 that answers every chat completion with "pong". */
export async function startFakeProvider() {
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk) => {
      raw += chunk;
    });
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const { model } = JSON.parse(raw);
      const answer = {
        id: 'chatcmpl-packed',
        object: 'chat.completion',
        created: 1_700_000_000,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

/** A gateway whose one model is served by the provider at `providerUrl`, and an inference key. */
export async function createAppGateway(providerUrl, gatewayOptions = {}) {
  const config = parseGatewayConfig({
    providers: { fake: { format: 'openai', base_url: `${providerUrl}/v1`, api_key: 'sk-fake' } },
    models: [
      {
        id: 'fake/chat',
        max_output_tokens: 100,
        endpoints: [
          { provider: 'fake', upstream_model: 'chat-1', pricing: { prompt: '1', completion: '2' } },
        ],
      },
    ],
  });
  const storage = await createSqliteStorage({ path: ':memory:' });
  const gateway = createGateway(storage, buildCatalogue(config), gatewayOptions);
  const account = await storage.createAccount({ name: 'app' });
  await topUpAccount(storage, account.id, 1_000_000, 0);
  const { secret } = await createApiKey(storage, {
    accountId: account.id,
    name: 'app',
    scope: 'inference',
    env: 'live',
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

/** One chat completion through the app at `baseUrl` (…/v1); checks the provider's answer came back. */
export async function askOnce(baseUrl, key, label) {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'fake/chat',
      messages: [{ role: 'user', content: 'ping' }],
      max_tokens: 10,
    }),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.equal(body.choices[0].message.content, 'pong');
  assert.equal(body.gateway.provider, 'fake');
  console.log(
    `${label}: 200 "${body.choices[0].message.content}" via ${body.gateway.provider}, cost_usd ${body.gateway.cost_usd}`,
  );
}
