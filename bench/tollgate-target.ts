import type { ServerProcess } from './child-process.js';
import {
  type Cell,
  MODES,
  type Mode,
  measureTarget,
  type Plan,
  SKIN_MODES,
  type TargetRun,
} from './measure-target.js';
import { type Metering, readMetering } from './metering.js';
import type { TargetInfo } from './report.js';
import { peakHwm } from './rss.js';
import {
  type BenchDb,
  dbLocation,
  EMBEDDING_MODEL,
  MODEL,
  PACED_MODEL,
  provision,
  serve,
} from './tollgate-process.js';

export interface TollgateSpec {
  name: string;
  workers: number;
  /** Creates the fresh, empty database. */
  createDb: () => Promise<BenchDb>;
  /** Removes it again (Postgres); the SQLite file goes with the temp directory. */
  dropDb?: (db: BenchDb) => Promise<void>;
  /** NODE_OPTIONS for the server (V8 heap flags, say). */
  nodeOptions?: string;
}

/** The request record's `endpoint` of each mode's requests. */
const ENDPOINT_OF: Record<Mode, string> = {
  json: 'chat.completions',
  stream: 'chat.completions',
  embeddings: 'embeddings',
  cached: 'chat.completions',
  messages: 'messages',
  'messages-stream': 'messages',
  responses: 'responses',
  'responses-stream': 'responses',
};

/** What the clients read and what was cut, by endpoint (the modes of one endpoint added up). */
function clientsByEndpoint(run: TargetRun): Record<string, { clientOk: number; cut: number }> {
  const out: Record<string, { clientOk: number; cut: number }> = {};
  for (const [mode, seen] of Object.entries(run.byMode) as [Mode, { clientOk: number; cut: number }][]) {
    const endpoint = ENDPOINT_OF[mode];
    out[endpoint] ??= { clientOk: 0, cut: 0 };
    const into = out[endpoint];
    into.clientOk += seen.clientOk;
    into.cut += seen.cut;
  }
  return out;
}

/**
 * Per endpoint, as for the whole: every answer a client read was recorded as served (at most the
 * cut ones more), and every served request was charged, except the response-cache hits.
 */
function endpointsConsistent(
  m: Metering,
  clients: Record<string, { clientOk: number; cut: number }>,
): boolean {
  return Object.entries(clients).every(([endpoint, { clientOk, cut }]) => {
    const e = m.byEndpoint[endpoint] ?? { successRecords: 0, chargedRecords: 0, cacheHits: 0 };
    return (
      e.successRecords >= clientOk &&
      e.successRecords <= clientOk + cut &&
      e.chargedRecords >= e.successRecords - e.cacheHits
    );
  });
}

/**
 * One Tollgate target: a fresh database, provision, serve, measure every cell, stop (it drains), then
 * read from the database what was metered. Never throws: a failure becomes the target's status.
 */
export async function benchTollgate(
  spec: TollgateSpec,
  config: string,
  plan: Plan,
  log: (line: string) => void,
  modes: readonly Mode[] = [...MODES, ...SKIN_MODES],
): Promise<{ info: TargetInfo; cells: Cell[] }> {
  const { name, workers } = spec;
  let db: BenchDb | null = null;
  let server: ServerProcess | null = null;
  try {
    db = await spec.createDb();
    const key = await provision(dbLocation(db), config);
    server = await serve(name, dbLocation(db), config, workers, spec.nodeOptions);
    log(
      `  serving at ${server.url} on a fresh ${db.kind} database${workers > 1 ? ` with ${workers} workers` : ''}`,
    );
    const run = await measureTarget(
      {
        name,
        url: server.url,
        pid: server.pid,
        processes: workers,
        headers: { authorization: `Bearer ${key}` },
        model: MODEL,
        pacedModel: PACED_MODEL,
        embeddingModel: EMBEDDING_MODEL,
        ...(db.kind === 'postgres' && { databaseCommand: 'postgres' }),
        modes,
      },
      plan,
      log,
    );
    const hwm = peakHwm(server.pid);
    await server.stop(15_000);
    server = null;
    const m = await readMetering(db);
    const clients = clientsByEndpoint(run);
    // Served-but-unread answers can only come from requests the load generator cut at a run's end.
    const consistent =
      m.chargeEntries === m.chargedRecords &&
      m.recordCostMicros === m.chargedMicros &&
      m.openHolds === 0 &&
      m.successRecords >= run.clientOk &&
      m.successRecords <= run.clientOk + run.cut &&
      endpointsConsistent(m, clients);
    const info: TargetInfo = {
      name,
      status: 'ran',
      tollgate: true,
      hwm,
      ttft: run.ttft,
      forwarding: run.forwarding,
      metering: { ...m, clientOk: run.clientOk, cut: run.cut, clients, consistent },
    };
    return { info, cells: run.cells };
  } catch (error) {
    const message = (error as Error).message;
    log(`${name}: failed: ${message}`);
    return { info: { name, status: `failed: ${message.split('\n')[0]}`, tollgate: true }, cells: [] };
  } finally {
    await server?.stop();
    if (db && spec.dropDb) await spec.dropDb(db).catch(() => {});
  }
}
