import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BlackholeProxy } from './helpers/blackhole-proxy.js';
import { CliProcess, cliEnv, serveArgs, serverSecretEnv } from './helpers/cli-process.js';
import {
  DRAIN_UPSTREAM,
  type DrainScenario,
  moneyOf,
  prepareDrainScenario,
  startServe,
} from './helpers/drain-scenario.js';
import { type ApiResponse, call, expectError } from './helpers/http.js';
import { cliJson, createScratchDatabase, type ScratchDatabase } from './helpers/multi-process-gateway.js';
import { ok } from './helpers/routing-gateway.js';

const chatBody = { model: 'acme/drain', messages: [{ role: 'user', content: 'hi' }] };

/**
 * A tmpfs of 8 MiB mounted for this file (root only): a disk that can really fill up. Returns the
 * reason it cannot be had, or null.
 */
function mountSmallDisk(dir: string): string | null {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { encoding: 'utf8' });
  return mounted.status === 0 ? null : `mount -t tmpfs failed: ${mounted.stderr.trim()}`;
}

/** Writes zeros to `path` until the file system is full. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (let i = 0; i < 1_000_000; i++) {
      try {
        writeSync(fd, block);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOSPC') {
          // The last partial block too.
          for (let j = 0; j < 1_000; j++) {
            try {
              writeSync(fd, Buffer.alloc(512));
            } catch {
              return;
            }
          }
          return;
        }
        throw error;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const diskDir = mkdtempSync(join(tmpdir(), 'tollgate-fulldisk-'));
const noDisk = mountSmallDisk(diskDir);
if (noDisk) {
  rmSync(diskDir, { recursive: true, force: true });
  console.info(`[e2e] "a full SQLite disk" is skipped: ${noDisk}`);
}

describe.skipIf(noDisk !== null)(`a full SQLite disk${noDisk ? ` (skipped: ${noDisk})` : ''}`, () => {
  let scenario: DrainScenario;
  let serve: CliProcess;
  let url: string;
  const filler = join(diskDir, 'filler');

  beforeAll(async () => {
    scenario = await prepareDrainScenario(diskDir);
    ({ serve, url } = await startServe(scenario, ['--drain-delay-ms', '0']));
  }, 60_000);

  afterAll(async () => {
    if (serve?.running) await serve.stop('SIGTERM');
    await scenario?.remove();
    spawnSync('umount', [diskDir]);
    rmSync(diskDir, { recursive: true, force: true });
  }, 60_000);

  const chat = () => {
    scenario.mock.enqueue(DRAIN_UPSTREAM, ok('fits'));
    return call(url, '/v1/chat/completions', { key: scenario.tenant.inferenceKey, json: chatBody });
  };

  it('chats answer 200 or 503 storage_unavailable, never 500; /healthz and /readyz 503 until a write succeeds again', async () => {
    expect((await chat()).status).toBe(200);
    fillDisk(filler);

    // Until one is refused: the first writes may still fit in the pages the database already has.
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 40 && answers.at(-1)?.status !== 503; i++) answers.push(await chat());
    for (const answer of answers) {
      if (answer.status !== 200) expectError(answer, 503, 'storage_unavailable');
    }
    expect(answers.at(-1)!.status).toBe(503);
    expect(answers.at(-1)!.headers.get('retry-after')).toBe('1');
    expect(await call(url, '/healthz')).toMatchObject({
      status: 503,
      body: { status: 'unavailable', reason: 'storage cannot write' },
    });
    expect((await call(url, '/readyz')).status).toBe(503);

    // Space again: the next request's writes land, and so health returns.
    rmSync(filler);
    const after: ApiResponse[] = [];
    for (let i = 0; i < 5 && after.at(-1)?.status !== 200; i++) after.push(await chat());
    expect(after.map((a) => a.status)).not.toContain(500);
    expect(after.at(-1)!.status).toBe(200);
    expect(await call(url, '/healthz')).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect((await call(url, '/readyz')).status).toBe(200);

    await serve.stop('SIGTERM');
    expect((await serve.exited).code).toBe(0);
    const money = await moneyOf(scenario);
    await money.close();
    expect(money.holds).toEqual([]);
    expect(money.balanceMicros).toBe(scenario.creditMicros - money.chargedMicros);
  });
});

const databaseUrl = process.env.TEST_DATABASE_URL;
const NO_PG = 'TEST_DATABASE_URL is not set';
if (!databaseUrl) console.info(`[e2e] "Postgres unreachable" is skipped: ${NO_PG}`);

describe.skipIf(!databaseUrl)(`Postgres unreachable${databaseUrl ? '' : ` (skipped: ${NO_PG})`}`, () => {
  const DEADLINE_MS = 2_000;
  let db: ScratchDatabase;
  let proxy: BlackholeProxy;
  let scenario: DrainScenario;
  let serve: CliProcess | undefined;
  let url: string;
  let key: string;

  beforeAll(async () => {
    db = await createScratchDatabase(databaseUrl!);
    const real = new URL(db.url);
    proxy = new BlackholeProxy(real.hostname, Number(real.port || 5432));
    const viaProxy = new URL(db.url);
    viaProxy.port = String(await proxy.start());
    scenario = await prepareDrainScenario();
    const common = ['--db', db.url, '--config', scenario.config];
    const account = await cliJson(['account', 'create', '--name', 'pg-down', '--credit-usd', '5', ...common]);
    key = (await cliJson(['key', 'create', '--account', account.id!, '--name', 'k', ...common])).key!;
    // The server reaches the database only through the proxy.
    serve = new CliProcess(
      [...serveArgs(viaProxy.toString(), scenario.config, 10_000), '--db-timeout-ms', String(DEADLINE_MS)],
      cliEnv(serverSecretEnv(viaProxy.toString())),
    );
    [, url] = (await serve.waitFor(/Tollgate listening on (http:\/\/[0-9.]+:\d+)/, 'stderr')) as [
      string,
      string,
    ];
  }, 90_000);

  afterEach(() => proxy?.restore());

  afterAll(async () => {
    if (serve?.running) await serve.stop('SIGKILL');
    await proxy?.stop();
    await scenario?.remove();
    await db?.drop();
  }, 60_000);

  const chat = () => {
    scenario.mock.enqueue(DRAIN_UPSTREAM, ok('answered'));
    return call(url, '/v1/chat/completions', { key, json: chatBody });
  };

  it('a chat answers 503 storage_unavailable within the deadline, nothing sent upstream; /healthz answers 503 promptly; both recover', async () => {
    expect((await chat()).status).toBe(200);
    const sent = scenario.mock.received.length;

    proxy.blackhole();
    const startedAt = Date.now();
    const refused = await chat();
    const tookMs = Date.now() - startedAt;
    expectError(refused, 503, 'storage_unavailable');
    // Bounded by the deadline, not by the network (before: 105 s): a wide margin for a busy machine.
    expect(tookMs).toBeLessThan(DEADLINE_MS * 6);
    expect(scenario.mock.received.length).toBe(sent);

    const health = await call(url, '/healthz');
    expect(health).toMatchObject({ status: 503, body: { status: 'unavailable' } });
    expect((await call(url, '/readyz')).status).toBe(503);
    expect((await call(url, '/livez')).status).toBe(200);

    proxy.restore();
    const after: ApiResponse[] = [];
    for (let i = 0; i < 5 && after.at(-1)?.status !== 200; i++) after.push(await chat());
    expect(after.at(-1)!.status).toBe(200);
    for (let i = 0; i < 10 && (await call(url, '/healthz')).status !== 200; i++) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await call(url, '/healthz')).status).toBe(200);

    await serve!.stop('SIGTERM');
    expect((await serve!.exited).code).toBe(0);
    const [balance] = await db.query<{ balance_micros: string }>('SELECT balance_micros FROM accounts');
    const [ledger] = await db.query<{ credits: string; charged: string }>(
      `SELECT coalesce(sum(amount_micros) FILTER (WHERE kind <> 'charge'), 0) AS credits,
              coalesce(-sum(amount_micros) FILTER (WHERE kind = 'charge'), 0) AS charged
         FROM ledger_entries`,
    );
    expect(await db.query('SELECT id FROM credit_reservations')).toEqual([]);
    expect(Number(ledger!.charged)).toBeGreaterThan(0);
    expect(Number(balance!.balance_micros)).toBe(Number(ledger!.credits) - Number(ledger!.charged));
  });
});
