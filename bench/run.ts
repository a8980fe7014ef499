import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  type BatchTarget,
  batchConfigDir,
  benchBatches,
  formatBatchTable,
  writeBatchConfig,
} from './batch.js';
import { jsonUrl, type ServerProcess, startServer } from './child-process.js';
import { nodeArgsFor } from './compile.js';
import { MODES, type Mode, measureTarget, type Plan, SKIN_MODES } from './measure-target.js';
import {
  type BenchReport,
  formatFailures,
  formatMetering,
  formatTable,
  formatTargets,
  type TargetInfo,
  writeJson,
} from './report.js';
import { peakHwm } from './rss.js';
import {
  type BenchDb,
  CLI,
  createPostgresDb,
  dropPostgresDb,
  postgresReachable,
  supportsWorkers,
  writeConfig,
} from './tollgate-process.js';
import { benchTollgate, type TollgateSpec } from './tollgate-target.js';
import { WARMUP_ANSWERS_PER_PROCESS } from './warm-up.js';
import { EMBEDDING_DIMENSIONS, EMBEDDINGS_INPUT, sseEvents, syntheticChunkLines } from './wire.js';

const USAGE = `Usage: node --import tsx bench/run.ts [--quick] [--duration S] [--warmup S] [--warmup-answers N] [--chunks N]
       [--fixture FILE.chunks.txt] [--ttft-requests N] [--postgres-url URL] [--no-postgres] [--out FILE]
       [--node-options=FLAGS]   NODE_OPTIONS for the Tollgate servers (e.g. --node-options=--max-semi-space-size=4)
       [--no-batches]           skip the batch measurement (POST /v1/batches, items/s and peak RSS)
       [--batches-only]         run only the batch measurement
       [--batch-sizes N,N]      batch sizes, in order (default 1000,10000)
       [--batch-concurrency N]  batches.concurrency of the server (default 8, the config default)
       [--only NAMES]           measure only these targets (e.g. tollgate-sqlite); the others are skipped
       [--modes NAMES]          measure only these modes (json,stream,embeddings,cached,responses,responses-stream,messages,messages-stream)
       [--concurrency N,N]      client concurrencies of the cells (default 1,64)
Runs after \`npm run build\` (Tollgate runs from dist/); \`npm run bench\` does both.`;

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    'warmup-answers': { type: 'string' },
    chunks: { type: 'string', default: '300' },
    fixture: { type: 'string' },
    'ttft-requests': { type: 'string' },
    'postgres-url': { type: 'string' },
    'no-postgres': { type: 'boolean' },
    out: { type: 'string' },
    'node-options': { type: 'string' },
    'no-batches': { type: 'boolean' },
    'batches-only': { type: 'boolean' },
    'batch-sizes': { type: 'string', default: '1000,10000' },
    'batch-concurrency': { type: 'string', default: '8' },
    only: { type: 'string' },
    modes: { type: 'string' },
    concurrency: { type: 'string', default: '1,64' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
if (opts['no-batches'] && opts['batches-only']) {
  console.error('bench: --no-batches and --batches-only exclude each other');
  process.exit(2);
}
const batchSizes = String(opts['batch-sizes'])
  .split(',')
  .map((n) => Number(n.trim()));
const batchConcurrency = Number(opts['batch-concurrency']);
if (!batchSizes.every((n) => Number.isInteger(n) && n >= 1 && n <= 10_000) || !(batchConcurrency >= 1)) {
  console.error('bench: --batch-sizes takes whole numbers from 1 to 10000; --batch-concurrency a number ≥ 1');
  process.exit(2);
}
const only = opts.only ? new Set(opts.only.split(',').map((name) => name.trim())) : null;
const ALL_MODES = [...MODES, ...SKIN_MODES];
const modes = opts.modes ? (opts.modes.split(',').map((mode) => mode.trim()) as Mode[]) : ALL_MODES;
const concurrencies = String(opts.concurrency)
  .split(',')
  .map((n) => Number(n.trim()));
if (
  !modes.every((mode) => ALL_MODES.includes(mode)) ||
  !concurrencies.every((c) => Number.isInteger(c) && c >= 1)
) {
  console.error(`bench: --modes takes ${ALL_MODES.join(', ')}; --concurrency whole numbers ≥ 1`);
  process.exit(2);
}
/** Whether a target is to be measured (`--only`). */
const wanted = (name: string) => only === null || only.has(name);
const runMain = !opts['batches-only'];
const runBatches = !opts['no-batches'];
// Ctrl-C still runs the exit hook that stops every server the bench started.
process.on('SIGINT', () => process.exit(130));

const HERE = import.meta.dirname;
const plan: Plan = {
  durationS: Number(opts.duration ?? (opts.quick ? 1 : 5)),
  warmupS: Number(opts.warmup ?? (opts.quick ? 0.5 : 1)),
  warmupAnswers: Number(opts['warmup-answers'] ?? (opts.quick ? 2_000 : WARMUP_ANSWERS_PER_PROCESS)),
  concurrencies,
  ttftRequests: Number(opts['ttft-requests'] ?? (opts.quick ? 30 : 200)),
  settleMs: opts.quick ? 200 : 500,
};
const postgresUrl =
  opts['postgres-url'] ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const outPath = opts.out ?? join(HERE, 'results', 'latest.json');
const started = performance.now();
const log = (line: string) => console.log(line);
const elapsed = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;

if (!existsSync(CLI)) {
  console.error(`bench: ${CLI} is missing; run \`npm run build\` first (or \`npm run bench\`).`);
  process.exit(1);
}

const tmp = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
const servers: ServerProcess[] = [];
const targets: TargetInfo[] = [];
const batchTargets: BatchTarget[] = [];
const report: BenchReport & { batches?: { sizes: number[]; concurrency: number; targets: BatchTarget[] } } = {
  startedAt: new Date().toISOString(),
  node: process.version,
  cpus: availableParallelism(),
  loadAverage: { start: loadavg()[0] ?? 0, end: 0 },
  command: `node --import tsx bench/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
  plan: {
    ...plan,
    modes,
    chunks: Number(opts.chunks),
    fixture: opts.fixture ?? null,
    embeddings: { inputs: EMBEDDINGS_INPUT.length, dimensions: EMBEDDING_DIMENSIONS },
  },
  cells: [],
  targets,
  ...(runBatches && { batches: { sizes: batchSizes, concurrency: batchConcurrency, targets: batchTargets } }),
  totalS: 0,
};

try {
  const [mockJs, proxyJs, floorJs] = nodeArgsFor(
    [join(HERE, 'mock-upstream-server.ts'), join(HERE, 'bare-proxy.ts'), join(HERE, 'web-floor.ts')],
    join(HERE, 'results', '.build'),
  ) as [string[], string[], string[]];
  const mockArgs = [...mockJs, '--chunks', String(opts.chunks)];
  if (opts.fixture) mockArgs.push('--fixture', opts.fixture);
  const mock = await startServer('mock-upstream', mockArgs, jsonUrl);
  servers.push(mock);
  const pgDown = opts['no-postgres'] ? 'skipped (--no-postgres)' : await postgresReachable(postgresUrl);
  const pgSkip =
    pgDown === null || pgDown.startsWith('skipped')
      ? pgDown
      : `skipped (no Postgres at ${postgresUrl}: ${pgDown})`;
  if (runMain) {
    const proxy = await startServer('bare-proxy', [...proxyJs, mock.url], jsonUrl);
    servers.push(proxy);
    // The machine's own room for a second process: the bare proxy as two (node:cluster).
    const proxy2 = await startServer('bare-proxy-2p', [...proxyJs, mock.url, '2'], jsonUrl);
    servers.push(proxy2);
    const floor = await startServer('web-floor', [...floorJs, mock.url], jsonUrl);
    servers.push(floor);
    const streamBytes = sseEvents(syntheticChunkLines(Number(opts.chunks))).reduce((n, b) => n + b.length, 0);
    log(
      `Tollgate bench: node ${process.version}, ${report.cpus} cores (load average ${report.loadAverage.start.toFixed(1)}); cells of ${plan.durationS} s after ${plan.warmupS} s ` +
        `of warm-up (each target first answers ${plan.warmupAnswers} JSON requests per process); c = ${plan.concurrencies.join(', ')}; modes = ${modes.join(', ')}; stream = ${opts.fixture ? opts.fixture : `role + ${opts.chunks} content + finish + usage chunks + [DONE] (${(streamBytes / 1024).toFixed(0)} kB)`}; ` +
        `embeddings = ${EMBEDDINGS_INPUT.length} input${EMBEDDINGS_INPUT.length === 1 ? '' : 's'} → ${EMBEDDING_DIMENSIONS} floats each`,
    );

    const upstream = {
      headers: { authorization: 'Bearer sk-bench-upstream' },
      model: 'gpt-4o-mini',
      embeddingModel: 'text-embedding-3-small',
    };
    for (const [name, server, processes] of [
      ['direct', mock, 1],
      ['bare-proxy', proxy, 1],
      ['bare-proxy-2p', proxy2, 2],
      ['web-floor', floor, 1],
    ] as const) {
      if (!wanted(name)) {
        targets.push({ name, status: 'skipped (--only)', tollgate: false });
        continue;
      }
      log(`${name} (${server.url}) [${elapsed()}]`);
      const run = await measureTarget(
        {
          name,
          url: server.url,
          pid: server.pid,
          processes,
          ...upstream,
          pacedModel: 'paced-gpt-4o-mini',
          // The proxies serve no Responses wire.
          modes: modes.filter((mode) => MODES.includes(mode)),
        },
        plan,
        log,
      );
      report.cells.push(...run.cells);
      targets.push({
        name,
        status: 'ran',
        tollgate: false,
        hwm: peakHwm(server.pid),
        ttft: run.ttft,
        forwarding: run.forwarding,
      });
    }

    const config = writeConfig(tmp, mock.url);
    const workers = await supportsWorkers();
    const sqlite = (file: string) => async () => ({ kind: 'sqlite' as const, path: join(tmp, file) });
    const tollgates: (TollgateSpec & { skip: string | null })[] = [
      { name: 'tollgate-sqlite', workers: 1, createDb: sqlite('w1.db'), skip: null },
      {
        name: 'tollgate-sqlite-2w',
        workers: 2,
        createDb: sqlite('w2.db'),
        skip: workers ? null : 'n/a (--workers not available)',
      },
      {
        name: 'tollgate-postgres',
        workers: 1,
        createDb: () => createPostgresDb(postgresUrl),
        dropDb: (db) => dropPostgresDb(postgresUrl, db as { name: string }),
        skip: pgSkip,
      },
      {
        // The scale-out check: two gateway processes on one Postgres database.
        name: 'tollgate-postgres-2w',
        workers: 2,
        createDb: () => createPostgresDb(postgresUrl),
        dropDb: (db) => dropPostgresDb(postgresUrl, db as { name: string }),
        skip: pgSkip ?? (workers ? null : 'n/a (--workers not available)'),
      },
    ];
    for (const spec of tollgates) {
      if (opts['node-options']) spec.nodeOptions = opts['node-options'];
      const skip = spec.skip ?? (wanted(spec.name) ? null : 'skipped (--only)');
      if (skip) {
        log(`${spec.name}: ${skip}`);
        targets.push({ name: spec.name, status: skip, tollgate: true });
        continue;
      }
      log(`${spec.name} [${elapsed()}]`);
      const { info, cells } = await benchTollgate(spec, config, plan, log, modes);
      report.cells.push(...cells);
      targets.push(info);
    }
  }

  if (runBatches) {
    const batchConfig = writeBatchConfig(batchConfigDir(tmp), mock.url, batchConcurrency);
    log(
      `Batches: node ${process.version}, ${report.cpus} cores (load average ${loadavg()[0]?.toFixed(1)}); one Tollgate ` +
        `process, batches of ${batchSizes.join(' then ')} chat items, batches.concurrency ${batchConcurrency}; ` +
        `items/s = items / (POST → completed, polled every 100 ms) [${elapsed()}]`,
    );
    const specs = [
      {
        name: 'batches-sqlite',
        createDb: async () => ({ kind: 'sqlite' as const, path: join(tmp, 'batches.db') }),
        skip: null,
      },
      {
        // The same, with V8's old space capped: the default lets garbage pile up to ~220 MB between
        // full collections (live heap after one: ~25 MB whatever the batch size), which RSS shows.
        name: 'batches-sqlite-heap128',
        createDb: async () => ({ kind: 'sqlite' as const, path: join(tmp, 'batches-heap128.db') }),
        nodeOptions: '--max-old-space-size=128',
        skip: null,
      },
      {
        name: 'batches-postgres',
        createDb: () => createPostgresDb(postgresUrl),
        dropDb: (db: BenchDb) => dropPostgresDb(postgresUrl, db as { name: string }),
        skip: pgSkip,
      },
    ];
    for (const spec of specs) {
      if (spec.skip) {
        log(`${spec.name}: ${spec.skip}`);
        batchTargets.push({ name: spec.name, status: spec.skip, concurrency: batchConcurrency, runs: [] });
        continue;
      }
      log(`${spec.name} [${elapsed()}]`);
      batchTargets.push(
        await benchBatches(
          { ...spec, ...(opts['node-options'] && { nodeOptions: opts['node-options'] }) },
          batchConfig,
          batchConcurrency,
          batchSizes,
          log,
        ),
      );
    }
  }
} catch (error) {
  console.error(`bench: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  for (const server of servers.reverse()) await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}

report.totalS = (performance.now() - started) / 1000;
report.loadAverage.end = loadavg()[0] ?? 0;
if (report.cells.length > 0) {
  log(`\n${formatTable(report)}\n`);
  log(`Targets (against the bare proxy of this run; reported, not asserted):\n${formatTargets(report)}\n`);
  const metering = formatMetering(report);
  if (metering) log(`Metering (read from each bench database):\n${metering}\n`);
  const failures = formatFailures(report);
  if (failures) log(`Failures:\n${failures}\n`);
}
if (batchTargets.length > 0)
  log(`Batches (one Tollgate process, zero-latency mock upstream):\n${formatBatchTable(batchTargets)}\n`);
if (report.cells.length > 0 || batchTargets.some((t) => t.runs.length > 0)) {
  writeJson(outPath, report);
  log(`Written to ${outPath}`);
}
log(`Total wall time: ${report.totalS.toFixed(1)} s (load average now ${report.loadAverage.end.toFixed(1)})`);
