import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliEnv, EXAMPLE_CONFIG } from './helpers/cli-process.js';
import { call } from './helpers/http.js';

const KEY = /gw_(?:live|test)_[A-Za-z0-9_-]{32}/g;
/** The server's own log line (JSON on stderr) names the URL it listens on. */
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;

let dir: string;
let dbPath: string;
const started: CliProcess[] = [];

/** `tollgate serve --port 0` on the temp file with the example config. */
function serve(): CliProcess {
  const child = new CliProcess(
    ['serve', '--port', '0', '--host', '127.0.0.1', '--db', dbPath, '--config', EXAMPLE_CONFIG],
    // No provider keys: the example's models are listed, none is usable, nothing is called.
    cliEnv({ OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GROQ_API_KEY: '', DEEPSEEK_API_KEY: '' }),
  );
  started.push(child);
  return child;
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
    expect(models.body.data.length).toBeGreaterThan(0);

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
