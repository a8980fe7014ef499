import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type CliProcess, cliEnv, collect, REPO_ROOT, START_COMMAND } from './helpers/cli-process.js';
import {
  DRAIN_UPSTREAM,
  type DrainScenario,
  HELD_TEXT,
  moneyOf,
  prepareDrainScenario,
  STREAM_TEXT,
  startHeldStream,
  startServe,
  terminalOf,
  untilDraining,
} from './helpers/drain-scenario.js';
import { call } from './helpers/http.js';
import { ok } from './helpers/routing-gateway.js';
import { parseSse } from './helpers/sse.js';

/**
 * `tollgate serve` on SIGTERM, through the real server: readiness turns 503 at once, requests are
 * still served for the drain delay, in-flight streams run to their end within the grace (or are
 * cut and settled at its end), and the process exits 0; a second signal exits at once.
 */
describe('tollgate serve drains on SIGTERM (SQLite)', () => {
  let scenario: DrainScenario | undefined;
  let serve: CliProcess | undefined;

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && serve) console.log(serve.stderr.slice(-6000));
    // Only the process this test started, by its handle (SIGKILL: a test that failed mid-drain).
    if (serve?.running) await serve.stop('SIGKILL');
    await scenario?.remove();
    serve = undefined;
    scenario = undefined;
  });

  it('a stream in flight completes in full and is charged once; /readyz 503 from the signal on; new requests served until the listener closes; exit 0', async () => {
    scenario = await prepareDrainScenario();
    const started = await startServe(scenario, ['--drain-delay-ms', '3000', '--grace-ms', '60000']);
    serve = started.serve;
    const { url } = started;
    expect((await call(url, '/readyz')).status).toBe(200);
    const stream = await startHeldStream(url, scenario);

    serve.child.kill('SIGTERM');
    const draining = await untilDraining(url);
    expect(draining.body).toEqual({ status: 'draining' });
    expect(draining.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    expect((await call(url, '/livez')).status).toBe(200);
    // Still accepting during the drain delay: a new request is served in full.
    scenario.mock.enqueue(DRAIN_UPSTREAM, ok('served while draining'));
    const late = await call(url, '/v1/chat/completions', {
      key: scenario.tenant.inferenceKey,
      json: { model: 'acme/drain', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(late.status).toBe(200);
    expect(late.body.choices[0].message.content).toBe('served while draining');
    // Then the listener closes while the stream is still open.
    await vi.waitFor(() => expect(fetch(`${url}/livez`)).rejects.toThrow(), {
      timeout: 15_000,
      interval: 50,
    });
    expect(serve.running).toBe(true);

    scenario.mock.release();
    const text = await stream.reader.readAll();
    expect(stream.reader.content()).toBe(STREAM_TEXT);
    expect(terminalOf(text).choices[0].finish_reason).toBe('stop');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect((await serve.exited).code).toBe(0);

    const money = await moneyOf(scenario);
    const record = await money.record(stream.requestId);
    await money.close();
    expect(record).toMatchObject({ status: 'success', finishReason: 'stop' });
    expect(money.charges.filter((e) => e.requestId === stream.requestId)).toHaveLength(1);
    expect(money.holds).toEqual([]);
    expect(money.balanceMicros).toBe(scenario.creditMicros - money.chargedMicros);
  });

  it('a grace too short for the stream: cut at its end, settled as broken, charged for what was delivered, no hold left, exit 0', async () => {
    scenario = await prepareDrainScenario();
    const started = await startServe(scenario, ['--drain-delay-ms', '0', '--grace-ms', '1500']);
    serve = started.serve;
    const stream = await startHeldStream(started.url, scenario);

    serve.child.kill('SIGTERM');
    const text = await stream.reader.readAll();
    const events = parseSse(text);
    const error = events.find((e) => e.event === 'error');
    expect(JSON.parse(error!.data).error).toMatchObject({ code: 'shutting_down', type: 'api_error' });
    expect(terminalOf(text).choices[0]?.finish_reason ?? null).toBeNull();
    expect(stream.reader.content()).toBe(HELD_TEXT);
    expect((await serve.exited).code).toBe(0);

    const money = await moneyOf(scenario);
    const record = (await money.record(stream.requestId))!;
    await money.close();
    expect(record).toMatchObject({ status: 'broken_stream', errorCode: 'shutting_down' });
    expect(record.costMicros).toBeGreaterThan(0);
    expect(terminalOf(text).gateway.cost_micros).toBe(record.costMicros);
    expect(money.charges.map((e) => [e.requestId, -e.amountMicros])).toEqual([
      [stream.requestId, record.costMicros],
    ]);
    expect(money.holds).toEqual([]);
    expect(money.balanceMicros).toBe(scenario.creditMicros - record.costMicros);
  });

  it('a second signal exits at once, without waiting for the stream; its hold is left to the sweep', async () => {
    scenario = await prepareDrainScenario();
    const started = await startServe(scenario, ['--drain-delay-ms', '0', '--grace-ms', '60000']);
    serve = started.serve;
    const stream = await startHeldStream(started.url, scenario);

    serve.child.kill('SIGTERM');
    await serve.waitFor(/shutting down/, 'stderr');
    serve.child.kill('SIGTERM');
    const exit = await serve.exited;
    expect(exit.code).toBe(128 + 15);
    expect(stream.reader.done).toBe(false);

    const money = await moneyOf(scenario);
    await money.close();
    expect(money.holds.map((hold) => hold.requestId)).toEqual([stream.requestId]);
    expect(money.charges).toEqual([]);
  });

  it('--workers 2: every worker drains; the stream that ends within the grace completes, the one that does not is cut and settled; exit 0', async () => {
    scenario = await prepareDrainScenario();
    const started = await startServe(scenario, [
      '--workers',
      '2',
      '--drain-delay-ms',
      '3000',
      '--grace-ms',
      '8000',
    ]);
    serve = started.serve;
    const { url } = started;
    const finishing = await startHeldStream(url, scenario);
    const cut = await startHeldStream(url, scenario);

    serve.child.kill('SIGTERM');
    await untilDraining(url);
    // Each answer closes its connection while draining, so these reach both workers in turn.
    const probes = await Promise.all(Array.from({ length: 4 }, () => call(url, '/readyz')));
    expect(probes.map((p) => p.body)).toEqual(Array(4).fill({ status: 'draining' }));

    scenario.mock.releaseOldest();
    const finished = await finishing.reader.readAll();
    expect(finishing.reader.content()).toBe(STREAM_TEXT);
    expect(terminalOf(finished).choices[0].finish_reason).toBe('stop');
    const broken = parseSse(await cut.reader.readAll());
    expect(JSON.parse(broken.find((e) => e.event === 'error')!.data).error.code).toBe('shutting_down');
    expect((await serve.exited).code).toBe(0);

    const money = await moneyOf(scenario);
    const records = [await money.record(finishing.requestId), await money.record(cut.requestId)];
    await money.close();
    expect(records.map((r) => [r?.status, r?.errorCode])).toEqual([
      ['success', null],
      ['broken_stream', 'shutting_down'],
    ]);
    expect(money.charges.map((e) => e.requestId).sort()).toEqual([finishing.requestId, cut.requestId].sort());
    expect(money.holds).toEqual([]);
    expect(money.balanceMicros).toBe(scenario.creditMicros - money.chargedMicros);
  }, 90_000);
});

describe('npm start hands SIGTERM to the server', () => {
  let scenario: DrainScenario | undefined;
  let npm: ChildProcess | undefined;
  let serverPid: number | undefined;

  afterEach(async () => {
    if (npm && npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    // A server this test started and npm left behind (the defect this test is for), by its pid.
    if (serverPid !== undefined) {
      try {
        process.kill(serverPid, 'SIGKILL');
      } catch {}
    }
    await scenario?.remove();
  });

  it('kill -TERM <npm start pid>: the server drains (/readyz 503), stops and exits; npm exits 0', async () => {
    const start = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start as string;
    expect(start).toMatch(new RegExp(`&& exec ${START_COMMAND}$`));
    scenario = await prepareDrainScenario();
    npm = spawn('npm', ['start', '--silent'], {
      cwd: REPO_ROOT,
      env: cliEnv({
        DATABASE_URL: scenario.db,
        TOLLGATE_CONFIG: scenario.config,
        PORT: '0',
        LOG_FORMAT: 'json',
        TOLLGATE_DRAIN_DELAY_MS: '2000',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = collect(npm);
    let stderr = '';
    npm.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const listening = await vi.waitFor(
      () => {
        const line = stderr.split('\n').find((l) => l.includes('Tollgate listening on'));
        if (!line) throw new Error(`not listening yet:\n${stderr}`);
        return JSON.parse(line) as { pid: number; url: string };
      },
      { timeout: 240_000, interval: 100 },
    );
    serverPid = listening.pid;
    // The server is its own process (node), not npm's shell.
    expect(listening.pid).not.toBe(npm.pid);
    expect((await call(listening.url, '/readyz')).status).toBe(200);

    npm.kill('SIGTERM');
    expect((await untilDraining(listening.url)).body).toEqual({ status: 'draining' });
    const result = await exited;
    expect(result.code).toBe(0);
    expect(stderr).toMatch(/"msg":"stopped"/);
    // Nothing is left running: the server exited with npm, not after it.
    expect(() => process.kill(listening.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    serverPid = undefined;
  }, 300_000);
});
