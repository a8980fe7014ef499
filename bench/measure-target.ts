import { setTimeout as sleep } from 'node:timers/promises';
import { measureCpu, microsPerRequest } from './cpu.js';
import { type Answer, runLoad } from './load.js';
import { sampleRss } from './rss.js';
import type { FailureTally } from './stats.js';
import { checkForwarding, type ForwardingResult, measureTtft, type TtftResult } from './ttft.js';
import { warmUp } from './warm-up.js';
import { chatRequestBody, embeddingsRequestBody, messagesRequestBody, responsesRequestBody } from './wire.js';

/**
 * Chat completions as JSON, chat completions streamed, embeddings (JSON), and the JSON chat request
 * again with `X-Gateway-Cache: true`: after its first request every one is a response-cache hit
 * (the proxies without a cache ignore the header and go upstream). The wire skins' modes send the
 * same chat request on the Responses wire (`responses`, `responses-stream`: `POST /v1/responses`)
 * and the Anthropic Messages wire (`messages`, `messages-stream`: `POST /v1/messages`), which only
 * Tollgate serves (it translates both to the same upstream chat call).
 */
export type Mode =
  | 'json'
  | 'stream'
  | 'embeddings'
  | 'cached'
  | 'responses'
  | 'responses-stream'
  | 'messages'
  | 'messages-stream';
/** The modes every target serves. */
export const MODES: readonly Mode[] = ['json', 'stream', 'embeddings', 'cached'];
/** The wire skins' modes: Tollgate targets only, measured at the highest concurrency only. */
export const SKIN_MODES: readonly Mode[] = ['responses', 'responses-stream', 'messages', 'messages-stream'];

const CHAT_PATH = '/v1/chat/completions';
const EMBEDDINGS_PATH = '/v1/embeddings';
const RESPONSES_PATH = '/v1/responses';
const MESSAGES_PATH = '/v1/messages';

/** What each mode sends, where, and what a complete answer is. */
function requestFor(
  target: Target,
  mode: Mode,
): { path: string; body: string; answer: Answer; headers?: Record<string, string> } {
  if (mode === 'cached') {
    return {
      path: CHAT_PATH,
      body: chatRequestBody(target.model, false),
      answer: 'completion',
      headers: { 'x-gateway-cache': 'true' },
    };
  }
  if (mode === 'responses' || mode === 'responses-stream') {
    const stream = mode === 'responses-stream';
    return {
      path: RESPONSES_PATH,
      body: responsesRequestBody(target.model, stream),
      answer: stream ? 'response-stream' : 'response',
    };
  }
  if (mode === 'messages' || mode === 'messages-stream') {
    const stream = mode === 'messages-stream';
    return {
      path: MESSAGES_PATH,
      body: messagesRequestBody(target.model, stream),
      answer: stream ? 'messages-stream' : 'message',
    };
  }
  if (mode === 'embeddings')
    return {
      path: EMBEDDINGS_PATH,
      body: embeddingsRequestBody(target.embeddingModel),
      answer: 'embeddings',
    };
  const stream = mode === 'stream';
  return {
    path: CHAT_PATH,
    body: chatRequestBody(target.model, stream),
    answer: stream ? 'stream' : 'completion',
  };
}

/** Something to put load on: where it listens, which process to watch, how to call it. */
export interface Target {
  name: string;
  url: string;
  pid: number;
  /** How many processes answer (a Tollgate with workers: each must be warmed up). */
  processes: number;
  headers: Record<string, string>;
  model: string;
  pacedModel: string;
  /** The model the embeddings cells ask for. */
  embeddingModel: string;
  /** The command of its database server's processes on this machine (`postgres`), whose CPU is counted too. */
  databaseCommand?: string;
  /** The modes to measure (default `MODES`); the Responses ones only at the highest concurrency. */
  modes?: readonly Mode[];
}

export interface Plan {
  durationS: number;
  /** Each cell's own warm-up at its concurrency, in seconds. */
  warmupS: number;
  /** Answers per process of the target's warm-up before its first cell (see `warm-up.ts`). */
  warmupAnswers: number;
  concurrencies: number[];
  ttftRequests: number;
  /** Pause after a run that left requests in flight, so its backlog does not land in the next run. */
  settleMs: number;
}

export interface Cell {
  target: string;
  mode: Mode;
  concurrency: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  peakRssMb: number;
  /** CPU of the target's every thread (all its processes) per answered request, µs; null without /proc. */
  cpuUsPerRequest: number | null;
  /** CPU of its main threads alone (where the JavaScript runs) per answered request, µs. */
  mainUsPerRequest: number | null;
  /** CPU of its database server on this machine per answered request, µs (`measureCpu`); null without one. */
  databaseUsPerRequest: number | null;
  ttftP50Ms: number | null;
  ok: number;
  errors: number;
  failures: ReturnType<FailureTally['toJSON']>;
  cutAtStop: number;
  elapsedS: number;
}

export interface TargetRun {
  cells: Cell[];
  ttft: TtftResult;
  forwarding: ForwardingResult;
  /** Complete 2xx answers the clients got, warm-ups and stream probes included. */
  clientOk: number;
  /** Requests the load generator cut at the end of a run (the server may still have served them). */
  cut: number;
  /** `clientOk` and `cut` by mode measured (the stream probes count under `stream`). */
  byMode: Partial<Record<Mode, { clientOk: number; cut: number }>>;
}

/** Every cell of one target ({json, stream, embeddings} × concurrencies), then the stream probes. */
export async function measureTarget(
  target: Target,
  plan: Plan,
  log: (line: string) => void,
): Promise<TargetRun> {
  const cells: Cell[] = [];
  let clientOk = 0;
  let cut = 0;
  const modes = target.modes ?? MODES;
  const byMode: Record<string, { clientOk: number; cut: number }> = Object.fromEntries(
    [...new Set<Mode>(['json', 'stream', ...modes])].map((mode) => [mode, { clientOk: 0, cut: 0 }]),
  );
  // The target's own warm-up, before its first cell, until its JIT has settled: JSON chat at the
  // highest concurrency, not measured; its failures count with the first cell's.
  const json = requestFor(target, 'json');
  const warmTarget = await warmUp(
    {
      url: target.url,
      connections: Math.max(...plan.concurrencies),
      ...json,
      headers: { ...target.headers, ...json.headers },
    },
    target.processes,
    plan.warmupAnswers,
  );
  log(
    `  warmed up: ${warmTarget.ok} answers in ${warmTarget.elapsedS.toFixed(1)} s (${(warmTarget.ok / target.processes).toFixed(0)} per process)`,
  );
  if (warmTarget.cutAtStop > 0) await sleep(plan.settleMs);
  clientOk += warmTarget.ok;
  cut += warmTarget.cutAtStop;
  byMode.json!.clientOk += warmTarget.ok;
  byMode.json!.cut += warmTarget.cutAtStop;
  const maxConnections = Math.max(...plan.concurrencies);
  /** The wire skins already warmed up (by their JSON mode's path). */
  const warmSkins = new Set<string>();
  /** A warm-up's failures, counted with the next cell's. */
  let warmFailures: FailureTally[] = [warmTarget.failures];
  for (const mode of modes) {
    const request = requestFor(target, mode);
    const skin = SKIN_MODES.includes(mode) ? (mode.startsWith('messages') ? 'messages' : 'responses') : null;
    if (skin && !warmSkins.has(skin)) {
      // A skin's own code is cold after a warm-up on chat: it gets the same warm-up, so its cells
      // compare with chat's at the same point of V8's tiering.
      warmSkins.add(skin);
      const json = requestFor(target, skin);
      const warm = await warmUp(
        { url: target.url, connections: maxConnections, ...json, headers: { ...target.headers } },
        target.processes,
        plan.warmupAnswers,
      );
      log(`  warmed up ${json.path}: ${warm.ok} answers in ${warm.elapsedS.toFixed(1)} s`);
      if (warm.cutAtStop > 0) await sleep(plan.settleMs);
      clientOk += warm.ok;
      cut += warm.cutAtStop;
      byMode[skin] ??= { clientOk: 0, cut: 0 };
      byMode[skin].clientOk += warm.ok;
      byMode[skin].cut += warm.cutAtStop;
      warmFailures.push(warm.failures);
    }
    const concurrencies = skin ? [maxConnections] : plan.concurrencies;
    for (const connections of concurrencies) {
      const spec = {
        url: target.url,
        connections,
        ...request,
        headers: { ...target.headers, ...request.headers },
      };
      const warm = await runLoad({ ...spec, durationS: plan.warmupS });
      if (warm.cutAtStop > 0) await sleep(plan.settleMs);
      const rss = sampleRss(target.pid);
      const cpu = measureCpu(target.pid, target.databaseCommand);
      const load = await runLoad({ ...spec, durationS: plan.durationS });
      const spent = cpu.stop();
      const peakRssMb = rss.stop();
      const answered = load.ok + load.failures.total;
      if (load.cutAtStop > 0) await sleep(plan.settleMs);
      clientOk += warm.ok + load.ok;
      cut += warm.cutAtStop + load.cutAtStop;
      byMode[mode]!.clientOk += warm.ok + load.ok;
      byMode[mode]!.cut += warm.cutAtStop + load.cutAtStop;
      const tallies = [...warmFailures, warm.failures, load.failures];
      warmFailures = [];
      const errors = tallies.reduce((n, tally) => n + tally.total, 0);
      const failures: Cell['failures'] = {};
      for (const [kind, seen] of tallies.flatMap((tally) => [...tally.counts])) {
        failures[kind] = { count: (failures[kind]?.count ?? 0) + seen.count, example: seen.example };
      }
      cells.push({
        target: target.name,
        mode,
        concurrency: connections,
        rps: load.rps,
        p50Ms: load.p50Ms,
        p99Ms: load.p99Ms,
        peakRssMb,
        cpuUsPerRequest: microsPerRequest(spent?.processMs, answered),
        mainUsPerRequest: microsPerRequest(spent?.mainMs, answered),
        databaseUsPerRequest: microsPerRequest(spent?.databaseMs, answered),
        ttftP50Ms: null,
        ok: load.ok,
        errors,
        failures,
        cutAtStop: load.cutAtStop,
        elapsedS: load.elapsedS,
      });
      log(
        `  ${target.name} ${mode} c=${connections}: ${load.rps.toFixed(0)} req/s, p50 ${load.p50Ms.toFixed(3)} ms, ` +
          `p99 ${load.p99Ms.toFixed(3)} ms, ${peakRssMb.toFixed(0)} MB${cpuText(cells.at(-1)!)}` +
          `${errors ? `, ${errors} ERRORS ${JSON.stringify(failures)}` : ''}`,
      );
    }
  }

  const streamBody = chatRequestBody(target.model, true);
  const ttft = await measureTtft(target.url, target.headers, streamBody, plan.ttftRequests, 30_000);
  const forwarding = await checkForwarding(
    target.url,
    target.headers,
    chatRequestBody(target.pacedModel, true),
  );
  clientOk += ttft.ok + forwarding.ok;
  byMode.stream!.clientOk += ttft.ok + forwarding.ok;
  const firstStream = cells.find(
    (c) => c.mode === 'stream' && c.concurrency === Math.min(...plan.concurrencies),
  );
  if (firstStream) firstStream.ttftP50Ms = ttft.p50Ms;
  for (const probe of [ttft.failures, forwarding.failures]) {
    if (probe.total > 0 && firstStream) {
      firstStream.errors += probe.total;
      Object.assign(firstStream.failures, probe.toJSON());
    }
  }
  log(
    `  ${target.name} ttft p50 ${ttft.p50Ms.toFixed(3)} ms (n=${ttft.n}); chunks forwarded as they arrive: ` +
      `${forwarding.asTheyArrive ? 'yes' : 'NO'} (spread ${forwarding.spreadMs.toFixed(1)} ms of ${forwarding.upstreamSpreadMs} ms)`,
  );
  return { cells, ttft, forwarding, clientOk, cut, byMode };
}

/** ", CPU 612 µs/req (main 540), database 250 µs/req" for the log line, or nothing without a reading. */
function cpuText(cell: Cell): string {
  if (cell.cpuUsPerRequest === null) return '';
  const database =
    cell.databaseUsPerRequest === null ? '' : `, database ${cell.databaseUsPerRequest.toFixed(0)} µs/req`;
  return `, CPU ${cell.cpuUsPerRequest.toFixed(0)} µs/req (main ${cell.mainUsPerRequest?.toFixed(0) ?? '-'})${database}`;
}
