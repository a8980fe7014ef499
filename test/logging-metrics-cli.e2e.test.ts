import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliEnv, EXAMPLE_CONFIG, REPO_ROOT, serveArgs } from './helpers/cli-process.js';

const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
const TOKEN = 'cli-metrics-token-5e1a';

/** `tollgate serve` as shipped: the config's `metrics.token`, access lines on stderr, `/metrics`. */
describe('tollgate serve: access log and GET /metrics from the config', () => {
  let dir: string;
  let server: CliProcess;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tollgate-metrics-cli-'));
    const config = JSON.parse(readFileSync(join(REPO_ROOT, EXAMPLE_CONFIG), 'utf8'));
    const configPath = join(dir, 'tollgate.config.json');
    writeFileSync(configPath, JSON.stringify({ ...config, metrics: { token: TOKEN } }));
    server = new CliProcess(
      serveArgs(join(dir, 'tollgate.db'), configPath, 2_000),
      cliEnv({ LOG_FORMAT: 'json' }),
    );
    url = (await server.waitFor(LISTENING, 'stderr'))[1]!;
  });

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a request leaves its access line (JSON) on stderr; /metrics wants the token and counts it', async () => {
    const missing = await fetch(`${url}/v1/no-such-route`);
    expect(missing.status).toBe(404);
    const requestId = missing.headers.get('x-gateway-request-id')!;
    const line = await server.waitFor(new RegExp(`^.*"requestId":"${requestId}".*$`, 'm'), 'stderr');
    expect(JSON.parse(line[0])).toMatchObject({
      level: 30,
      msg: 'request',
      requestId,
      method: 'GET',
      endpoint: 'unmatched',
      path: '/v1/no-such-route',
      status: 404,
      errorCode: 'not_found',
    });

    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const scrape = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(scrape.status).toBe(200);
    const text = await scrape.text();
    expect(text.split('\n')).toContain(
      'tollgate_requests_total{endpoint="unmatched",model="",provider="",status="404"} 1',
    );
    expect(text).toMatch(/^tollgate_holds_open 0$/m);
  });

  it('/healthz is unchanged', async () => {
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
  });
});
