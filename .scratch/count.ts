// Scratch: counts SQL statements and transactions per metered chat request (not committed).
import { createServer } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { createGateway, parseGatewayConfig, buildCatalogue, createApiKey, topUpAccount } from '../packages/core/src/index.js';
import { createSqliteStorage } from '../packages/storage-sqlite/src/index.js';
import { createPostgresStorage } from '../packages/storage-postgres/src/index.js';
import { completionJson } from '../bench/wire.js';

const log: string[] = [];
let counting = false;
const probe = new BetterSqlite3(':memory:').prepare('select 1');
const proto = Object.getPrototypeOf(probe);
for (const m of ['all', 'run', 'get', 'iterate']) {
  const orig = proto[m];
  proto[m] = function (this: { source: string }, ...args: unknown[]) {
    if (counting) log.push(this.source);
    return orig.apply(this, args);
  };
}
const origQuery = pg.Client.prototype.query;
(pg.Client.prototype as any).query = function (this: unknown, ...args: any[]) {
  if (counting) log.push(typeof args[0] === 'string' ? args[0] : args[0]?.text);
  return (origQuery as any).apply(this, args);
};

const json = completionJson(20);
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(json));
}).listen(0, '127.0.0.1');
await new Promise((r) => upstream.once('listening', r));
const mockUrl = `http://127.0.0.1:${(upstream.address() as any).port}`;
const config = parseGatewayConfig({
  providers: { mock: { format: 'openai', base_url: `${mockUrl}/v1`, api_key: 'sk' } },
  models: [{ id: 'openai/gpt-4o-mini', max_output_tokens: 16384, endpoints: [{ provider: 'mock', upstream_model: 'gpt-4o-mini', pricing: { prompt: '0.15', completion: '0.60' } }] }],
  defaults: { rate_limit_rpm: 1_000_000 },
});

async function run(name: string, storage: any, monthly: number | null) {
  const account = await storage.createAccount({ name: 'x', monthlyLimitMicros: monthly, defaultRpm: null });
  await topUpAccount(storage, account.id, 100_000_000, 0);
  const key = await createApiKey(storage, { accountId: account.id, name: 'k', scope: 'inference', env: 'live' });
  const gw = createGateway(storage, buildCatalogue(config, {}), { logger: { info() {}, warn() {}, error() {} } });
  const req = (stream: boolean) =>
    new Request('http://gw/v1/chat/completions', {
      method: 'POST',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream, messages: [{ role: 'user', content: 'hi' }] }),
    });
  for (const stream of [false]) {
    const r0 = await gw.fetch(req(stream));
    await r0.text();
    log.length = 0;
    counting = true;
    const N = 5;
    for (let i = 0; i < N; i++) {
      const r = await gw.fetch(req(stream));
      if (r.status !== 200) throw new Error(`${r.status} ${await r.text()}`);
      await r.text();
    }
    await new Promise((r) => setTimeout(r, 200));
    counting = false;
    const begins = log.filter((s) => /^\s*begin/i.test(s)).length;
    console.log(`${name} monthly=${monthly} stream=${stream}: ${log.length / N} statements/request, ${begins / N} transactions/request`);
    if (process.env.VERBOSE) for (const s of log.slice(0, log.length / N)) console.log('   ', s.slice(0, 160));
  }
  await gw.close();
}

const sqlite = await createSqliteStorage({ path: join(mkdtempSync(join(tmpdir(), 'cnt-')), 'db') });
await run('sqlite', sqlite, null);
await run('sqlite', sqlite, 500_000_000);
await sqlite.close();
const pgs = await createPostgresStorage({ connectionString: 'postgres://postgres@127.0.0.1:5432/test', schema: `cnt_${Date.now()}` });
await run('postgres', pgs, null);
await run('postgres', pgs, 500_000_000);
await pgs.close();
upstream.close();
