import type { ServerProcess } from './child-process.js';
import { type Cell, measureTarget, type Plan } from './measure-target.js';
import { readMetering } from './metering.js';
import type { TargetInfo } from './report.js';
import { peakHwm } from './rss.js';
import { type BenchDb, dbLocation, MODEL, PACED_MODEL, provision, serve } from './tollgate-process.js';

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

/**
 * One Tollgate target: a fresh database, provision, serve, measure every cell, stop (it drains), then
 * read from the database what was metered. Never throws: a failure becomes the target's status.
 */
export async function benchTollgate(
  spec: TollgateSpec,
  config: string,
  plan: Plan,
  log: (line: string) => void,
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
        headers: { authorization: `Bearer ${key}` },
        model: MODEL,
        pacedModel: PACED_MODEL,
      },
      plan,
      log,
    );
    const hwm = peakHwm(server.pid);
    await server.stop(15_000);
    server = null;
    const m = await readMetering(db);
    // Served-but-unread answers can only come from requests the load generator cut at a run's end.
    const consistent =
      m.chargeEntries === m.chargedRecords &&
      m.recordCostMicros === m.chargedMicros &&
      m.openHolds === 0 &&
      m.successRecords >= run.clientOk &&
      m.successRecords <= run.clientOk + run.cut;
    const info: TargetInfo = {
      name,
      status: 'ran',
      tollgate: true,
      hwm,
      ttft: run.ttft,
      forwarding: run.forwarding,
      metering: { ...m, clientOk: run.clientOk, cut: run.cut, consistent },
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
