import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { hashApiKey } from '@tollgate/core';
import { openStorage } from '@tollgate/node-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type CurlCommand,
  fetchCurl,
  findCurl,
} from '../packages/node-server/src/curl-snippet.test-support.js';
import { CliProcess, cliEnv, EXAMPLE_CONFIG } from './helpers/cli-process.js';
import { call } from './helpers/http.js';

const KEY = /gw_(?:live|test)_[A-Za-z0-9_-]{32}/g;
/** The server's own log line (JSON on stderr) names the URL it listens on. */
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

let dir: string;
let dbPath: string;
const started: CliProcess[] = [];

/** No provider keys: only the offline demo models (and the local one) are usable; nothing leaves the machine. */
const NO_KEYS = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GROQ_API_KEY: '', DEEPSEEK_API_KEY: '' };

/** `tollgate serve` with the example config and no provider key; default: port 0 on the shared temp file. */
function serve(options: { db?: string; port?: number; workers?: number } = {}): CliProcess {
  const child = new CliProcess(
    [
      'serve',
      ...['--port', String(options.port ?? 0), '--host', '127.0.0.1'],
      ...['--db', options.db ?? dbPath, '--config', EXAMPLE_CONFIG],
      ...(options.workers ? ['--workers', String(options.workers)] : []),
    ],
    cliEnv(NO_KEYS),
  );
  started.push(child);
  return child;
}

/** Whether a `curl` binary is on the PATH (the printed snippet is then also run as it is). */
const hasCurl = (() => {
  try {
    execFileSync('curl', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const execFileAsync = promisify(execFile);

/** The JSON body of running `curl` exactly as printed (continuation lines included) in a shell. */
async function viaShell(curl: CurlCommand) {
  const { stdout } = await execFileAsync('sh', [
    '-c',
    `${curl.text} --silent --show-error --write-out '\n%{http_code}'`,
  ]);
  const status = stdout.slice(stdout.lastIndexOf('\n') + 1);
  expect(status, stdout).toBe('200');
  return JSON.parse(stdout.slice(0, stdout.lastIndexOf('\n')));
}

async function viaFetch(curl: CurlCommand) {
  const response = await fetchCurl(curl);
  const text = await response.text();
  expect(response.status, text).toBe(200);
  return JSON.parse(text);
}

/**
 * The printed chat `curl`, run as printed (through `sh`, when curl is installed) or else with
 * fetch: it must answer 200 with a cost, and the charge must be in the ledger and the record.
 */
async function runPrintedCurl(url: string, stdout: string, db: string) {
  const curl = findCurl(stdout, '/v1/chat/completions');
  expect(curl.url).toBe(`${url}/v1/chat/completions`);
  const body = hasCurl ? await viaShell(curl) : await viaFetch(curl);
  expect(body.model).toBe('demo/chat-small');
  expect(body.choices[0].message.content).toContain('demo');
  expect(body.gateway.cost_micros).toBeGreaterThan(0);

  const key = curl.headers.Authorization!.replace(/^Bearer /, '');
  const record = await call(url, `/v1/generation?id=${body.gateway.request_id}`, { key });
  expect(record.status, record.text).toBe(200);
  expect(record.body.data).toMatchObject({ model: 'demo/chat-small', provider: 'demo' });
  const storage = await openStorage(db);
  try {
    const found = await storage.findApiKeyByHash(await hashApiKey(key));
    const ledger = await storage.listLedgerEntries(found!.account.id);
    expect(ledger.filter((e) => e.kind === 'charge').map((e) => e.amountMicros)).toEqual([
      -body.gateway.cost_micros,
    ]);
  } finally {
    await storage.close();
  }
  return body;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-first-start-'));
  dbPath = join(dir, 'tollgate.db');
});

afterEach(async () => {
  // Only the processes this file started, by their handles.
  await Promise.all(started.splice(0).map((child) => child.stop('SIGKILL')));
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tollgate serve: first start on an empty database, then a restart', () => {
  let provisioningKey: string | undefined;
  let inferenceKey: string | undefined;

  it('prints a provisioning key and an inference key with a curl line, serves, and exits 0 on SIGTERM', async () => {
    const server = serve();
    const [, url] = await server.waitFor(LISTENING, 'stderr');
    // The banner comes right after the listening line.
    await server.waitFor(/curl .*\/v1\/key.*\n/, 'stdout');

    const keys = [...new Set(server.stdout.match(KEY) ?? [])];
    expect(keys, server.stdout).toHaveLength(2);

    // Which printed key is which: ask the server.
    const scopes = new Map<string, string>();
    for (const key of keys) {
      const info = await call(url!, '/v1/key', { key });
      expect(info.status, info.text).toBe(200);
      scopes.set(info.body.data.scope, key);
      if (info.body.data.scope === 'inference') {
        expect(info.body.data.balance_micros).toBeGreaterThan(0);
        // The curl line uses the inference key.
        expect(server.stdout).toContain(`curl ${url}/v1/key -H "Authorization: Bearer ${key}"`);
      }
    }
    expect([...scopes.keys()].sort()).toEqual(['inference', 'provisioning']);
    provisioningKey = scopes.get('provisioning');
    inferenceKey = scopes.get('inference');
    expect((await call(url!, '/v1/keys', { key: provisioningKey })).status).toBe(200);

    const health = await call(url!, '/healthz');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    const models = await call(url!, '/v1/models');
    expect(models.status).toBe(200);
    const available = models.body.data.filter((m: { available: boolean }) => m.available);
    expect(available.map((m: { id: string }) => m.id)).toContain('demo/chat-small');

    // The printed chat curl answers offline, through the demo model, and is charged.
    const charged = await runPrintedCurl(url!, server.stdout, dbPath);
    const after = await call(url!, '/v1/key', { key: inferenceKey! });
    expect(after.body.data.balance_micros).toBe(5_000_000 - charged.gateway.cost_micros);

    const exit = await server.stop('SIGTERM');
    expect(exit.code, `signal ${exit.signal}; stderr: ${exit.stderr}`).toBe(0);
    expect(exit.signal).toBeNull();
  });

  it('a restart on the same file prints no keys, and the keys printed before still work', async () => {
    expect(inferenceKey, 'needs the first-start test').toBeDefined();
    const server = serve();
    const [, url] = await server.waitFor(LISTENING, 'stderr');
    const info = await call(url!, '/v1/key', { key: inferenceKey! });
    expect(info.status).toBe(200);
    expect((await call(url!, '/v1/keys', { key: provisioningKey! })).status).toBe(200);

    const exit = await server.stop('SIGTERM');
    expect(exit.code, `signal ${exit.signal}; stderr: ${exit.stderr}`).toBe(0);
    expect(exit.stdout.match(KEY)).toBeNull();
    expect(exit.stderr.match(KEY)).toBeNull();
  });

  it('never writes a key to the log (stderr) on first start', async () => {
    const fresh = join(dir, 'second.db');
    const child = new CliProcess(
      ['serve', '--port', '0', '--host', '127.0.0.1', '--db', fresh, '--config', EXAMPLE_CONFIG],
      cliEnv(),
    );
    started.push(child);
    const [, url] = await child.waitFor(LISTENING, 'stderr');
    await child.waitFor(/curl .*\n/, 'stdout');
    expect((await call(url!, '/healthz')).status).toBe(200);
    const exit = await child.stop('SIGTERM');
    expect(exit.code, `signal ${exit.signal}; stderr: ${exit.stderr}`).toBe(0);
    expect(exit.stdout.match(KEY)?.length).toBeGreaterThan(0);
    expect(exit.stderr.match(KEY)).toBeNull();
  });
});

/** A TCP port on 127.0.0.1 held by another server until `release()`. */
async function takePort(): Promise<{ port: number; release: () => Promise<void> }> {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as { port: number };
  return { port, release: () => new Promise((resolve) => holder.close(() => resolve())) };
}

async function accountsIn(db: string): Promise<number> {
  const storage = await openStorage(db);
  try {
    return await storage.countAccounts();
  } finally {
    await storage.close();
  }
}

describe('tollgate serve: keys are made only once the server listens', () => {
  it('a start on a port in use fails with a clear message and creates nothing; the next start prints the keys', async () => {
    const db = join(dir, 'port-in-use.db');
    const taken = await takePort();
    try {
      const exit = await serve({ db, port: taken.port }).exited;
      expect(exit.code, exit.stderr).toBe(1);
      expect(exit.stderr).toContain(`cannot listen on 127.0.0.1:${taken.port}: the port is already in use`);
      expect(exit.stdout.match(KEY)).toBeNull();
    } finally {
      await taken.release();
    }
    expect(await accountsIn(db)).toBe(0);

    const next = serve({ db });
    const [, url] = await next.waitFor(LISTENING, 'stderr');
    await next.waitFor(/curl .*\/v1\/key.*\n/, 'stdout');
    await runPrintedCurl(url!, next.stdout, db);
    const exit = await next.stop('SIGTERM');
    expect(exit.code, exit.stderr).toBe(0);
    expect(await accountsIn(db)).toBe(1);
  });

  it('--workers 2: the primary prints the banner once every worker listens, and its curl is charged', async () => {
    const db = join(dir, 'workers.db');
    const server = serve({ db, workers: 2 });
    await server.waitFor(/curl .*\/v1\/key.*\n/, 'stdout');
    const url = /curl (http:\/\/127\.0\.0\.1:\d+)\/v1\/key/.exec(server.stdout)![1]!;
    expect([...new Set(server.stdout.match(KEY))]).toHaveLength(2);
    await runPrintedCurl(url, server.stdout, db);
    const exit = await server.stop('SIGTERM');
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stderr.match(KEY)).toBeNull();
  });

  it('--workers 2 on a port in use: fails (no endless restarts) and creates nothing', async () => {
    const db = join(dir, 'workers-port-in-use.db');
    const taken = await takePort();
    try {
      const exit = await serve({ db, port: taken.port, workers: 2 }).exited;
      expect(exit.code, exit.stderr).toBe(1);
      expect(exit.stderr).toContain('the port is already in use');
      expect(exit.stderr).toContain(
        `cannot listen on 127.0.0.1:${taken.port}: a worker exited before listening`,
      );
      expect(exit.stdout.match(KEY)).toBeNull();
    } finally {
      await taken.release();
    }
    expect(await accountsIn(db)).toBe(0);
  });
});
