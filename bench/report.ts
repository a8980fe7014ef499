import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { type Cell, MODES, type Mode } from './measure-target.js';
import type { Metering } from './metering.js';
import type { ForwardingResult } from './ttft.js';

export interface TargetInfo {
  name: string;
  /** `ran`, or why it did not (`n/a (--workers not available)`, `skipped (…)`, `failed: …`). */
  status: string;
  tollgate: boolean;
  hwm?: { maxMb: number; sumMb: number; processes: number };
  ttft?: { p50Ms: number; p90Ms: number; n: number };
  forwarding?: Omit<ForwardingResult, 'failures'>;
  metering?: Metering & {
    clientOk: number;
    cut: number;
    /** What the clients read and what was cut, by the request record's endpoint. */
    clients: Record<string, { clientOk: number; cut: number }>;
    consistent: boolean;
  };
}

export interface BenchReport {
  startedAt: string;
  node: string;
  cpus: number;
  /** 1-minute load average at the start and the end: how busy the machine was besides the bench. */
  loadAverage: { start: number; end: number };
  command: string;
  plan: Record<string, unknown>;
  cells: Cell[];
  targets: TargetInfo[];
  totalS: number;
}

const f = (n: number | null | undefined, digits = 2) =>
  n === null || n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits);
const signed = (n: number | null | undefined) =>
  n === null || n === undefined || Number.isNaN(n) ? '-' : `${n >= 0 ? '+' : ''}${n.toFixed(2)}`;
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

function find(cells: Cell[], target: string, mode: Mode, concurrency: number): Cell | undefined {
  return cells.find((c) => c.target === target && c.mode === mode && c.concurrency === concurrency);
}

/** The table, one row per cell, with the deltas and ratios against direct and the bare proxy. */
export function formatTable(report: BenchReport): string {
  const header = [
    'target',
    'mode',
    'c',
    'RPS',
    'p50 ms',
    'p99 ms',
    '+p50 vs direct',
    '+p99 vs direct',
    'RPS / bare',
    'Δp50 vs bare',
    'Δp99 vs bare',
    'peak RSS MB',
    'CPU µs/req',
    'main µs/req',
    'database µs/req',
    'TTFT p50 ms',
    'errors',
  ];
  const rows: string[][] = [];
  for (const target of report.targets) {
    if (target.status !== 'ran') {
      rows.push([target.name, target.status]);
      continue;
    }
    for (const c of report.cells.filter((cell) => cell.target === target.name)) {
      const direct = find(report.cells, 'direct', c.mode, c.concurrency);
      const bare = find(report.cells, 'bare-proxy', c.mode, c.concurrency);
      rows.push([
        c.target,
        c.mode,
        String(c.concurrency),
        f(c.rps, 0),
        f(c.p50Ms),
        f(c.p99Ms),
        signed(direct && c.p50Ms - direct.p50Ms),
        signed(direct && c.p99Ms - direct.p99Ms),
        bare ? f(c.rps / bare.rps) : '-',
        signed(bare && c.p50Ms - bare.p50Ms),
        signed(bare && c.p99Ms - bare.p99Ms),
        f(c.peakRssMb, 0),
        f(c.cpuUsPerRequest, 0),
        f(c.mainUsPerRequest, 0),
        f(c.databaseUsPerRequest, 0),
        f(c.ttftP50Ms),
        c.errors ? `${c.errors} !` : '0',
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
          .map((col, i) => (i < 2 ? col.padEnd(widths[i] as number) : col.padStart(widths[i] as number)))
          .join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

/** Each target of the performance issue, per Tollgate target, against the bare proxy of the same run. */
export function formatTargets(report: BenchReport): string {
  const out: string[] = [];
  const bareTtft = report.targets.find((t) => t.name === 'bare-proxy')?.ttft;
  const maxC = Math.max(...report.cells.map((c) => c.concurrency));
  for (const t of report.targets.filter((x) => x.tollgate && x.status === 'ran')) {
    out.push(`${t.name}:`);
    const p99 = MODES.map((mode) => {
      const cell = find(report.cells, t.name, mode, 1);
      const bare = find(report.cells, 'bare-proxy', mode, 1);
      const delta = cell && bare ? cell.p99Ms - bare.p99Ms : Number.NaN;
      return `${mode} ${signed(delta)} ms ${verdict(delta <= 2)}`;
    });
    out.push(`  c=1 p99 within 2 ms of the bare proxy: ${p99.join(', ')}`);
    const ratios = (['json', 'embeddings'] as const).map((mode) => {
      const cell = find(report.cells, t.name, mode, maxC);
      const bare = find(report.cells, 'bare-proxy', mode, maxC);
      const ratio = cell && bare ? cell.rps / bare.rps : Number.NaN;
      return `${mode} ${f(ratio, 2)} × ${verdict(ratio >= 0.35)}`;
    });
    out.push(`  non-streaming RPS at c=${maxC} ≥ 0.35 × the bare proxy: ${ratios.join(', ')}`);
    const messages = (['json', 'stream'] as const).map((chatMode) => {
      const mode = chatMode === 'json' ? 'messages' : 'messages-stream';
      const m = find(report.cells, t.name, mode, maxC);
      const chat = find(report.cells, t.name, chatMode, maxC);
      const ratio = m && chat ? m.rps / chat.rps : Number.NaN;
      return `${chatMode} ${f(m?.rps, 0)} vs ${f(chat?.rps, 0)} (×${f(ratio)}) ${verdict(ratio >= 0.9)}`;
    });
    out.push(`  Messages API RPS within 10 % of chat's (same request, c=${maxC}): ${messages.join(', ')}`);
    const cacheRatios = plainConcurrencies(report).map((c) => {
      const hit = find(report.cells, t.name, 'cached', c);
      const miss = find(report.cells, t.name, 'json', c);
      const ratio = hit && miss ? hit.rps / miss.rps : Number.NaN;
      return `c=${c} ${f(hit?.rps, 0)} vs ${f(miss?.rps, 0)} (×${f(ratio)}) ${verdict(ratio >= 2)}`;
    });
    out.push(`  response-cache hit RPS ≥ 2 × a metered miss (json): ${cacheRatios.join(', ')}`);
    const dTtft = t.ttft && bareTtft ? t.ttft.p50Ms - bareTtft.p50Ms : Number.NaN;
    out.push(
      `  streaming adds ≤ 1 ms to TTFT (p50): ${signed(dTtft)} ms ${verdict(dTtft <= 1)}; chunks forwarded as they arrive: ` +
        `${t.forwarding?.asTheyArrive ? 'yes' : 'NO'} (spread ${f(t.forwarding?.spreadMs, 1)} of ${t.forwarding?.upstreamSpreadMs} ms) ` +
        verdict(t.forwarding?.asTheyArrive === true),
    );
    out.push(`  ${responsesComparison(report, t.name, maxC)}`);
    const hwm = t.hwm;
    const cellPeak = Math.max(0, ...report.cells.filter((c) => c.target === t.name).map((c) => c.peakRssMb));
    out.push(
      `  peak RSS ≤ 200 MB: ${f(hwm?.maxMb, 0)} MB (VmHWM of the largest of ${hwm?.processes} processes; ` +
        `all together ${f(hwm?.sumMb, 0)} MB, sampled peak ${f(cellPeak, 0)} MB) ${verdict((hwm?.maxMb ?? Infinity) <= 200)}`,
    );
  }
  const ran = (name: string) => report.targets.find((t) => t.name === name)?.status === 'ran';
  if (ran('tollgate-postgres') && ran('tollgate-sqlite')) {
    const parts = (['json', 'stream'] as const).map((mode) => {
      const pg = find(report.cells, 'tollgate-postgres', mode, maxC);
      const lite = find(report.cells, 'tollgate-sqlite', mode, maxC);
      const ratio = pg && lite ? pg.rps / lite.rps : Number.NaN;
      return `${mode} ${f(pg?.rps, 0)} vs ${f(lite?.rps, 0)} (×${f(ratio)}) ${verdict(ratio >= 1)}`;
    });
    out.push(`Postgres RPS ≥ SQLite RPS at c=${maxC}: ${parts.join(', ')}`);
    out.push(`  ${cpuComparison(report, maxC)}`);
  }
  // One process against two: the bare proxy first (how much a second process of stateless work
  // adds on this machine at all), then each store.
  for (const [label, oneName, twoName] of [
    ["bare proxy, the machine's room for a second process", 'bare-proxy', 'bare-proxy-2p'],
    ['sqlite', 'tollgate-sqlite', 'tollgate-sqlite-2w'],
    ['postgres', 'tollgate-postgres', 'tollgate-postgres-2w'],
  ] as const) {
    const one = report.targets.find((t) => t.name === oneName);
    const two = report.targets.find((t) => t.name === twoName);
    if (one?.status !== 'ran' || !two) continue;
    const parts = MODES.map((mode) => {
      const a = find(report.cells, oneName, mode, maxC);
      const b = two.status === 'ran' ? find(report.cells, twoName, mode, maxC) : undefined;
      return `${mode} ${f(a?.rps, 0)} → ${b ? `${f(b.rps, 0)} (×${f(b.rps / (a?.rps ?? Number.NaN))})` : two.status}`;
    });
    out.push(`scale-out (${label}, c=${maxC}, RPS with 1 → 2 processes): ${parts.join(', ')}`);
  }
  return out.join('\n');
}

/**
 * The Responses wire against chat on one target at c=`concurrency`: the same upstream chat call
 * behind both, so the difference is the skin's conversion (target: within 10 % of chat's RPS).
 */
function responsesComparison(report: BenchReport, target: string, concurrency: number): string {
  const parts = (
    [
      ['json', 'json', 'responses'],
      ['stream', 'stream', 'responses-stream'],
    ] as const
  ).map(([label, chatMode, responsesMode]) => {
    const chat = find(report.cells, target, chatMode, concurrency);
    const responses = find(report.cells, target, responsesMode, concurrency);
    const ratio = chat && responses ? responses.rps / chat.rps : Number.NaN;
    return `${label} ${f(responses?.rps, 0)} vs ${f(chat?.rps, 0)} (×${f(ratio)}) ${verdict(ratio >= 0.9)}`;
  });
  return `POST /v1/responses RPS within 10 % of chat's at c=${concurrency}: ${parts.join(', ')}`;
}

/**
 * The CPU of one json request at c=`concurrency` on each store, this machine's own processes only:
 * SQLite's gateway does its database work itself, a Postgres gateway leaves part of it to the
 * server's processes. On a machine the load saturates, RPS goes as the inverse of the sum.
 */
function cpuComparison(report: BenchReport, concurrency: number): string {
  const pg = find(report.cells, 'tollgate-postgres', 'json', concurrency);
  const lite = find(report.cells, 'tollgate-sqlite', 'json', concurrency);
  const total =
    pg && pg.cpuUsPerRequest !== null ? pg.cpuUsPerRequest + (pg.databaseUsPerRequest ?? 0) : null;
  const ratio = total !== null && lite?.cpuUsPerRequest ? total / lite.cpuUsPerRequest : Number.NaN;
  return (
    `CPU of one json request at c=${concurrency}: SQLite ${f(lite?.cpuUsPerRequest, 0)} µs; Postgres ` +
    `${f(pg?.cpuUsPerRequest, 0)} µs in the gateway + ${f(pg?.databaseUsPerRequest, 0)} µs in the server = ` +
    `${f(total, 0)} µs (×${f(ratio)} SQLite's)`
  );
}

/** The concurrencies the cells were run at, lowest first. */
function plainConcurrencies(report: BenchReport): number[] {
  return [...new Set(report.cells.map((c) => c.concurrency))].sort((a, b) => a - b);
}

/** What landed in each bench database, read directly, against what the clients were answered. */
export function formatMetering(report: BenchReport): string {
  return report.targets
    .filter((t) => t.metering)
    .map((t) => {
      const m = t.metering as NonNullable<TargetInfo['metering']>;
      const other = Object.entries(m.byOutcome).filter(([k]) => !k.startsWith('success'));
      const chargedOther = m.chargedRecords - (m.successRecords - m.cacheHits);
      return [
        `${t.name}: metered: ${m.records} requests, ${m.chargeEntries} ledger entries → ${m.consistent ? 'consistent' : 'INCONSISTENT'}`,
        `  ${m.successRecords} served (status success); the clients read ${m.clientOk} complete 2xx, the other ` +
          `${m.successRecords - m.clientOk} were answered after the load generator cut them at a run's end (${m.cut} cut in all); ` +
          `${m.cacheHits} of them answered from the response cache (cost 0 by design)`,
        ...(other.length
          ? [
              `  ${other.map(([k, n]) => `${k} ×${n}`).join(', ')} (requests cut at a run's end` +
                `${chargedOther > 0 ? `; ${chargedOther} streams among them charged for what was already sent` : ''})`,
            ]
          : []),
        `  by endpoint: ${Object.entries(m.byEndpoint)
          .map(
            ([endpoint, e]) =>
              `${endpoint} ${e.records} recorded, ${e.successRecords} served (clients read ${m.clients[endpoint]?.clientOk ?? 0}, ` +
              `${m.clients[endpoint]?.cut ?? 0} cut), ${e.chargedRecords} with a cost, Σ ${e.costMicros} µ$`,
          )
          .join('; ')}`,
        `  requests with a cost ${m.chargedRecords} = charge entries ${m.chargeEntries}; Σ record cost ${m.recordCostMicros} µ$ = ` +
          `Σ charges ${m.chargedMicros} µ$; open credit holds ${m.openHolds}`,
      ].join('\n');
    })
    .join('\n');
}

/** Every cell that saw a failure, by kind, with one example each. */
export function formatFailures(report: BenchReport): string {
  return report.cells
    .filter((c) => c.errors > 0)
    .flatMap((c) =>
      Object.entries(c.failures).map(
        ([kind, seen]) =>
          `${c.target} ${c.mode} c=${c.concurrency}: ${kind} ×${seen.count} — ${seen.example}`,
      ),
    )
    .join('\n');
}

export function writeJson(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
