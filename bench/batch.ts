import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerProcess } from './child-process.js';
import { type Metering, readMetering } from './metering.js';
import { peakHwm, sampleRss } from './rss.js';
import { type BenchDb, dbLocation, MODEL, provision, serve, writeConfig } from './tollgate-process.js';

/*
 * Batches (`/v1/batches`) on one Tollgate process against the zero-latency mock upstream: a batch of
 * chat items is POSTed, then `GET /v1/batches/{id}` is polled every ~100 ms until it is `completed`.
 * Items per second = items / (POST → completed seen); the gateway's RSS is sampled meanwhile (its
 * peak during that batch is reported). Every item is a full metered request of its own, so the
 * database is read afterwards as for the other targets: Σ record cost = Σ charges, no hold open,
 * one record per item.
 */

/** Polling interval of `GET /v1/batches/{id}`. */
const POLL_MS = 100;
/** A batch that has not completed by then is reported as failed (bounded: nothing waits forever). */
const MAX_WAIT_MS = 15 * 60_000;

export interface BatchRun {
  target: string;
  items: number;
  /** The POST body, in MB (2^20 bytes): it must fit `limits.max_request_mb`. */
  bodyMb: number;
  /** POST → status `completed` first seen. */
  seconds: number;
  /** Of which the POST itself (validation, sealing and storing every item). */
  postSeconds: number;
  itemsPerS: number;
  /** Sampled summed RSS of the server process tree, peak during this batch. */
  peakRssMb: number;
  completed: number;
  failed: number;
  /** Lines of `GET /v1/batches/{id}/results`. */
  resultLines: number;
  polls: number;
}

export interface BatchTarget {
  name: string;
  /** `ran`, or why not (`skipped (…)`, `failed: …`). */
  status: string;
  concurrency: number;
  runs: BatchRun[];
  hwm?: { maxMb: number; sumMb: number; processes: number };
  metering?: Metering & { expectedRecords: number; consistent: boolean };
}

export interface BatchSpec {
  name: string;
  createDb: () => Promise<BenchDb>;
  dropDb?: (db: BenchDb) => Promise<void>;
  nodeOptions?: string;
}

/** The items of one batch: small chat requests (the same body as the other chat cells). */
function batchBody(items: number): string {
  const requests = Array.from({ length: items }, (_, i) => ({
    custom_id: `item-${i}`,
    body: {
      model: MODEL,
      messages: [{ role: 'user', content: 'Name a holiday and say what it celebrates.' }],
      max_tokens: 1024,
    },
  }));
  return JSON.stringify({ endpoint: '/v1/chat/completions', requests });
}

/** The bench config (one provider: the mock) with the batch worker's settings, in `dir`. */
export function writeBatchConfig(dir: string, mockUrl: string, concurrency: number): string {
  mkdirSync(dir, { recursive: true });
  const path = writeConfig(dir, mockUrl);
  const config = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  config.batches = { concurrency, lease_ms: 30_000 };
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

async function api(
  server: ServerProcess,
  key: string,
  path: string,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method: init.method ?? 'GET',
    headers: {
      authorization: `Bearer ${key}`,
      ...(init.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(init.body !== undefined && { body: init.body }),
    signal: AbortSignal.timeout(120_000),
  });
  return { status: response.status, text: await response.text() };
}

interface BatchState {
  id: string;
  status: string;
  request_counts: { total: number; completed: number; failed: number };
}

/** One batch of `items`: POST, poll until completed, count the result lines. */
async function runOneBatch(
  name: string,
  server: ServerProcess,
  key: string,
  items: number,
  log: (line: string) => void,
): Promise<BatchRun> {
  const body = batchBody(items);
  const rss = sampleRss(server.pid);
  const started = performance.now();
  let state: BatchState;
  let postSeconds = 0;
  let polls = 0;
  let peakRssMb = 0;
  try {
    const created = await api(server, key, '/v1/batches', { method: 'POST', body });
    postSeconds = (performance.now() - started) / 1000;
    if (created.status !== 200) {
      throw new Error(`POST /v1/batches → ${created.status} ${created.text.slice(0, 300)}`);
    }
    state = JSON.parse(created.text) as BatchState;
    const deadline = started + MAX_WAIT_MS;
    while (state.status !== 'completed') {
      if (performance.now() > deadline || state.status === 'cancelled') {
        throw new Error(`batch ${state.id} not completed after ${polls} polls: ${JSON.stringify(state)}`);
      }
      await sleep(POLL_MS);
      polls++;
      const got = await api(server, key, `/v1/batches/${state.id}`);
      if (got.status !== 200) throw new Error(`GET /v1/batches/${state.id} → ${got.status} ${got.text}`);
      state = JSON.parse(got.text) as BatchState;
    }
  } finally {
    // The peak is kept even when the batch failed (stop() takes a last sample).
    peakRssMb = rss.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const results = await api(server, key, `/v1/batches/${state.id}/results`);
  const resultLines = results.text.split('\n').filter((line) => line.trim() !== '').length;
  const run: BatchRun = {
    target: name,
    items,
    bodyMb: Buffer.byteLength(body) / 2 ** 20,
    seconds,
    postSeconds,
    itemsPerS: items / seconds,
    peakRssMb,
    completed: state.request_counts.completed,
    failed: state.request_counts.failed,
    resultLines,
    polls,
  };
  log(
    `  ${name} batch of ${items}: ${run.itemsPerS.toFixed(0)} items/s (${seconds.toFixed(2)} s, POST ${postSeconds.toFixed(2)} s, ` +
      `body ${run.bodyMb.toFixed(2)} MB), peak RSS ${peakRssMb.toFixed(0)} MB, ${run.completed} completed, ${run.failed} failed, ` +
      `${resultLines} result lines`,
  );
  return run;
}

/**
 * One target: a fresh database, provision, one `tollgate serve`, each batch size in turn, stop (it
 * drains), then read what was metered. Never throws: a failure becomes the target's status.
 */
export async function benchBatches(
  spec: BatchSpec,
  config: string,
  concurrency: number,
  sizes: readonly number[],
  log: (line: string) => void,
): Promise<BatchTarget> {
  let db: BenchDb | null = null;
  let server: ServerProcess | null = null;
  const runs: BatchRun[] = [];
  try {
    db = await spec.createDb();
    const key = await provision(dbLocation(db), config);
    server = await serve(spec.name, dbLocation(db), config, 1, spec.nodeOptions);
    log(`  serving at ${server.url} on a fresh ${db.kind} database (batches.concurrency ${concurrency})`);
    for (const items of sizes) runs.push(await runOneBatch(spec.name, server, key, items, log));
    const hwm = peakHwm(server.pid);
    await server.stop(15_000);
    server = null;
    const m = await readMetering(db);
    const expectedRecords = sizes.reduce((a, b) => a + b, 0);
    const completed = runs.reduce((sum, r) => sum + r.completed, 0);
    const consistent =
      m.records === expectedRecords &&
      m.successRecords === completed &&
      m.chargeEntries === m.chargedRecords &&
      m.recordCostMicros === m.chargedMicros &&
      m.openHolds === 0 &&
      runs.every((r) => r.resultLines === r.items && r.completed + r.failed === r.items);
    return {
      name: spec.name,
      status: 'ran',
      concurrency,
      runs,
      hwm,
      metering: { ...m, expectedRecords, consistent },
    };
  } catch (error) {
    const message = (error as Error).message;
    log(`${spec.name}: failed: ${message}`);
    return { name: spec.name, status: `failed: ${message.split('\n')[0]}`, concurrency, runs };
  } finally {
    await server?.stop();
    if (db && spec.dropDb) await spec.dropDb(db).catch(() => {});
  }
}

const f = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

/** One row per batch: items per second and the peak RSS during it; then the reconciliation per target. */
export function formatBatchTable(targets: readonly BatchTarget[]): string {
  const header = [
    'target',
    'items',
    'body MB',
    'seconds',
    'items/s',
    'peak RSS MB',
    'completed',
    'failed',
    'lines',
  ];
  const rows: string[][] = [];
  for (const t of targets) {
    if (t.runs.length === 0) rows.push([t.name, t.status]);
    for (const r of t.runs) {
      rows.push([
        r.target,
        String(r.items),
        f(r.bodyMb),
        f(r.seconds),
        f(r.itemsPerS, 0),
        f(r.peakRssMb, 0),
        String(r.completed),
        String(r.failed),
        String(r.resultLines),
      ]);
    }
  }
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.filter((r) => r.length > 2).map((r) => (r[i] ?? '').length)),
  );
  const line = (cols: string[]) =>
    cols.length === 2
      ? `${cols[0]?.padEnd(widths[0] as number)} | ${cols[1]}`
      : cols
          .map((col, i) => (i < 1 ? col.padEnd(widths[i] as number) : col.padStart(widths[i] as number)))
          .join(' | ');
  const table = [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)];
  const notes = targets.flatMap((t) => {
    const m = t.metering;
    if (!m) return t.runs.length > 0 ? [`${t.name}: ${t.status}`] : [];
    return [
      `${t.name} (batches.concurrency ${t.concurrency}; VmHWM ${f(t.hwm?.maxMb ?? Number.NaN, 0)} MB): metered ` +
        `${m.records} requests for ${m.expectedRecords} items, ${m.successRecords} served; requests with a cost ` +
        `${m.chargedRecords} = charge entries ${m.chargeEntries}; Σ record cost ${m.recordCostMicros} µ$ = Σ charges ` +
        `${m.chargedMicros} µ$; open credit holds ${m.openHolds} → ${m.consistent ? 'consistent' : 'INCONSISTENT'}`,
    ];
  });
  return [...table, ...notes].join('\n');
}

/** The temp directory of the batch bench's config, beside the main bench's. */
export function batchConfigDir(tmp: string): string {
  return join(tmp, 'batches');
}
