import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { jsonUrl, startServer } from './child-process.js';
import { nodeArgsFor } from './compile.js';
import { measureCpu, microsPerRequest } from './cpu.js';
import { runLoad } from './load.js';
import { peakHwm } from './rss.js';
import { quantile, sorted } from './stats.js';
import {
  type BenchDb,
  createPostgresDb,
  dbLocation,
  dropPostgresDb,
  MODEL,
  provisionTenants,
  serve,
  writeConfig,
} from './tollgate-process.js';
import { measureTtft } from './ttft.js';
import { WARMUP_ANSWERS_PER_PROCESS, warmUp } from './warm-up.js';
import { chatRequestBody } from './wire.js';

/*
 * An A/B of Tollgate builds or settings on one cell (JSON chat, or with `--mode stream` the
 * 300-chunk stream), one server at a time: each round starts every variant in turn on a fresh
 * database (the order reversed every other round), warms it up as the bench does (`warm-up.ts`:
 * JSON chat until the JIT has settled), measures, and stops it. Two servers side by side are not
 * comparable here: in an A/A run the one started second spent ~6 % more CPU per request, whichever
 * it was. A variant is a name and the environment its server gets, e.g. `base=
 * nocap=TOLLGATE_HEAP_GROWING_PERCENT=0`; `BENCH_TOLLGATE_CLI` in a variant's environment runs
 * another build (a second checkout's `packages/node-server/dist/cli.js`), to compare two commits.
 * Two more say how the variant is run rather than what the server gets: `BENCH_WORKERS=2` serves
 * it with `--workers 2` (one process and two: `one= two=BENCH_WORKERS=2`), and `BENCH_TENANTS=16`
 * provisions 16 accounts, each with its own key, the connections taking them in turn (by default
 * one account and one key, as in the bench), and `BENCH_STORE=sqlite|postgres` serves it on that
 * store instead of `--store`'s (the issue's Postgres ÷ SQLite, judged round by round:
 * `sqlite=BENCH_STORE=sqlite postgres=BENCH_STORE=postgres`), and `BENCH_KEY_LIMIT_RESET=daily`
 * (or `weekly`, `monthly`) gives its keys a cap on that window, $1,000,000, which the cell never
 * reaches: what a windowed cap costs on the request path (`none= daily=BENCH_KEY_LIMIT_RESET=daily`).
 * Reports the medians of RPS, p50, p99, CPU µs per request (main thread, every thread, and with
 * Postgres the server's processes on this machine) and the server's peak RSS (Linux: its high-water
 * mark; elsewhere its RSS at the cell's end); with `--mode stream` also the time to the first
 * content chunk (p50 of 200 streams one after the other, after the cell, as the bench measures it).
 * Each variant after the first also gets its RPS ÷ the first's, round by round (their median and
 * range): on a machine whose speed drifts between rounds, steadier than a ratio of two medians.
 */

const USAGE = `Usage: node --import tsx bench/ab.ts [--store sqlite|postgres] [--mode json|stream] [--rounds N] [--c N] [--duration S] [--warmup-answers N]
       [--postgres-url URL] NAME=[VAR=value,VAR=value] NAME=…
A variant's BENCH_WORKERS=N serves it with --workers N; BENCH_TENANTS=N gives it N accounts, each with its key;
BENCH_STORE=sqlite|postgres serves it on that store instead of --store's;
BENCH_KEY_LIMIT_RESET=daily|weekly|monthly gives its keys a (never reached) cap on that window.
Runs after \`npm run build\` (Tollgate runs from dist/).`;

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    store: { type: 'string', default: 'sqlite' },
    mode: { type: 'string', default: 'json' },
    rounds: { type: 'string', default: '4' },
    c: { type: 'string', default: '64' },
    duration: { type: 'string', default: '4' },
    'warmup-answers': { type: 'string', default: String(WARMUP_ANSWERS_PER_PROCESS) },
    'postgres-url': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
const variants = positionals.map(parseVariant);
const streaming = opts.mode === 'stream';
const STORES = ['sqlite', 'postgres'];
if (
  opts.help ||
  variants.length === 0 ||
  ![opts.store, ...variants.map(storeOf)].every((store) => STORES.includes(String(store))) ||
  !['json', 'stream'].includes(String(opts.mode))
) {
  console.log(USAGE);
  process.exit(opts.help ? 0 : 2);
}
const postgresUrl =
  opts['postgres-url'] ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const rounds = Number(opts.rounds);
const connections = Number(opts.c);
const durationS = Number(opts.duration);
const warmupAnswers = Number(opts['warmup-answers']);
/** Streams one after the other for the TTFT of a stream cell (as many as the bench takes). */
const TTFT_STREAMS = 200;

/** `name=VAR=a,OTHER=b` → the name and the environment of its server. */
function parseVariant(arg: string): { name: string; env: Record<string, string> } {
  const [name = '', ...rest] = arg.split('=');
  const env: Record<string, string> = {};
  for (const pair of rest.join('=').split(',').filter(Boolean)) {
    const [key = '', ...value] = pair.split('=');
    env[key] = value.join('=');
  }
  return { name, env };
}

interface Sample {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  mainUs: number | null;
  cpuUs: number | null;
  /** The Postgres server's processes on this machine (`measureCpu`), null on SQLite. */
  databaseUs: number | null;
  /** The server's peak RSS since it started (warm-up included), in MB. */
  peakRssMb: number;
  /** With `--mode stream`: the median time to the first content chunk, streams one after the other (`measureTtft`). */
  ttftMs: number | null;
}

const HERE = import.meta.dirname;
const tmp = mkdtempSync(join(tmpdir(), 'tollgate-ab-'));
const [mockJs] = nodeArgsFor([join(HERE, 'mock-upstream-server.ts')], join(HERE, 'results', '.build')) as [
  string[],
];
const mock = await startServer('mock-upstream', [...mockJs, '--chunks', '300'], jsonUrl);
const config = writeConfig(tmp, mock.url);
const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));

try {
  for (let round = 0; round < rounds; round++) {
    for (const variant of round % 2 ? [...variants].reverse() : variants) {
      const sample = await measureVariant(variant, round);
      samples.get(variant.name)?.push(sample);
      console.log(`${round} ${variant.name.padEnd(16)} ${formatSample(sample)}`);
    }
  }
  console.log(
    `\nmedians over ${rounds} rounds, ${opts.mode} c=${connections}, ${durationS} s cells (${opts.store} unless a variant's BENCH_STORE says otherwise):`,
  );
  for (const [name, list] of samples) console.log(`${name.padEnd(16)} ${formatSample(medians(list))}`);
  const [[firstName, firstList] = ['', []], ...others] = [...samples];
  for (const [name, list] of others) {
    const ratios = sorted(list.map((sample, round) => sample.rps / firstList[round]!.rps));
    console.log(
      `${name} RPS ÷ ${firstName}, round by round: median ${quantile(ratios, 0.5).toFixed(2)} ` +
        `(${ratios[0]!.toFixed(2)}–${ratios[ratios.length - 1]!.toFixed(2)})`,
    );
  }
} finally {
  await mock.stop();
  rmSync(tmp, { recursive: true, force: true });
}

async function measureVariant(
  variant: { name: string; env: Record<string, string> },
  round: number,
): Promise<Sample> {
  const db: BenchDb =
    storeOf(variant) === 'postgres'
      ? await createPostgresDb(postgresUrl)
      : { kind: 'sqlite', path: join(tmp, `${variant.name}-${round}.db`) };
  try {
    // The CLI that provisions gets the variant's environment too: it creates the schema.
    const workers = countIn(variant.env, 'BENCH_WORKERS');
    const keys = await withEnv(variant.env, () =>
      provisionTenants(dbLocation(db), config, countIn(variant.env, 'BENCH_TENANTS'), keyArgsOf(variant.env)),
    );
    const server = await withEnv(variant.env, () => serve(variant.name, dbLocation(db), config, workers));
    try {
      const spec = {
        url: server.url,
        path: '/v1/chat/completions',
        headers: { authorization: `Bearer ${keys[0]}` },
        keys,
        body: chatRequestBody(MODEL, streaming),
        answer: streaming ? ('stream' as const) : ('completion' as const),
      };
      // Until the JIT has settled (as the bench does), then a second at the cell's own concurrency.
      const json = { body: chatRequestBody(MODEL, false), answer: 'completion' as const };
      await warmUp({ ...spec, ...json, connections: 64 }, workers, warmupAnswers);
      await runLoad({ ...spec, connections, durationS: 1 });
      const cpu = measureCpu(server.pid, db.kind === 'postgres' ? 'postgres' : undefined);
      const load = await runLoad({ ...spec, connections, durationS });
      const spent = cpu.stop();
      const peakRssMb = peakHwm(server.pid).maxMb;
      const answered = load.ok + load.failures.total;
      const ttft = streaming
        ? await measureTtft(server.url, spec.headers, spec.body, TTFT_STREAMS, 30_000)
        : null;
      return {
        rps: load.rps,
        p50Ms: load.p50Ms,
        p99Ms: load.p99Ms,
        mainUs: microsPerRequest(spent?.mainMs, answered),
        cpuUs: microsPerRequest(spent?.processMs, answered),
        databaseUs: microsPerRequest(spent?.databaseMs, answered),
        peakRssMb,
        ttftMs: ttft?.p50Ms ?? null,
      };
    } finally {
      await server.stop(15_000);
    }
  } finally {
    if (db.kind === 'postgres') await dropPostgresDb(postgresUrl, db);
  }
}

/** `key create`'s arguments for a variant's `BENCH_KEY_LIMIT_RESET`: a window cap it never reaches. */
function keyArgsOf(env: Record<string, string>): string[] {
  const reset = env.BENCH_KEY_LIMIT_RESET;
  if (reset === undefined) return [];
  if (!['daily', 'weekly', 'monthly'].includes(reset)) {
    throw new Error(`BENCH_KEY_LIMIT_RESET=${reset}: daily, weekly or monthly`);
  }
  return ['--spend-limit-usd', '1000000', '--limit-reset', reset];
}

/** The store a variant is served on: its `BENCH_STORE`, else `--store`'s. */
function storeOf(variant: { env: Record<string, string> }): string | undefined {
  return variant.env.BENCH_STORE ?? opts.store;
}

/** A whole number ≥ 1 that a variant's environment gives `name` (`BENCH_WORKERS`, `BENCH_TENANTS`); 1 if unset. */
function countIn(env: Record<string, string>, name: string): number {
  const value = env[name] ?? '1';
  if (!/^[1-9]\d{0,3}$/.test(value)) throw new Error(`${name}=${value}: a whole number from 1 to 9999`);
  return Number(value);
}

/** Runs `start` with `env` added to this process's environment (the child inherits it). */
async function withEnv<T>(env: Record<string, string>, start: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return await start();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}

/** The median as the bench's p50 is taken: nearest rank. */
function median(values: number[]): number {
  return quantile(sorted(values), 0.5);
}

function medians(list: Sample[]): Sample {
  const of = (values: (number | null)[]) =>
    values.every((v) => v !== null) ? median(values as number[]) : null;
  return {
    rps: median(list.map((s) => s.rps)),
    p50Ms: median(list.map((s) => s.p50Ms)),
    p99Ms: median(list.map((s) => s.p99Ms)),
    mainUs: of(list.map((s) => s.mainUs)),
    cpuUs: of(list.map((s) => s.cpuUs)),
    databaseUs: of(list.map((s) => s.databaseUs)),
    peakRssMb: median(list.map((s) => s.peakRssMb)),
    ttftMs: of(list.map((s) => s.ttftMs)),
  };
}

function formatSample(s: Sample): string {
  const us = (n: number | null) => (n === null ? '-' : n.toFixed(0));
  return (
    `RPS ${s.rps.toFixed(0).padStart(6)}  p50 ${s.p50Ms.toFixed(2)} ms  p99 ${s.p99Ms.toFixed(2)} ms  ` +
    `main ${us(s.mainUs)} µs/req  all threads ${us(s.cpuUs)} µs/req  ` +
    (s.databaseUs === null ? '' : `database ${us(s.databaseUs)} µs/req  `) +
    `peak RSS ${s.peakRssMb.toFixed(0)} MB` +
    (s.ttftMs === null ? '' : `  TTFT p50 ${s.ttftMs.toFixed(2)} ms`)
  );
}
