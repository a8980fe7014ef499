import cluster from 'node:cluster';
import { createHash } from 'node:crypto';
import { createGateway, type GatewayLogger, MB, type Storage } from '@tollgate/core';
import { runWorkers } from '../cluster/run-workers.js';
import { loadDashboardAssets } from '../dashboard/dashboard-assets.js';
import { DASHBOARD_PATH } from '../dashboard/dashboard-endpoint.js';
import {
  type FirstStartResult,
  formatFirstStartBanner,
  modelsOverview,
  provisionFirstStart,
} from '../first-start.js';
import { applyHeapGrowingPercent, parseHeapGrowingPercent } from '../heap-growth.js';
import { bufferedJsonResponse } from '../http/buffered-json-response.js';
import { createUndiciHttpClient } from '../http/undici-http-client.js';
import { createLogger } from '../logger.js';
import { createServerTelemetry } from '../observability/server-telemetry.js';
import { resolveStorageTarget } from '../open-storage.js';
import { probeLocalProviders } from '../probe-local-providers.js';
import { startServer } from '../server.js';
import { startExpirySweep } from '../sweep-expired.js';
import { CliError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { dbOption, loadConfig, withStorage } from './command-context.js';
import { COMMON_OPTIONS, intOption, parseCommandArgs } from './parse-values.js';
import { loadServeSecret } from './serve-secret.js';
import { readServeTimings, SHUTDOWN_OPTIONS, waitForSignal } from './serve-shutdown.js';
import { commandUsage } from './usage.js';

export const DEFAULT_PORT = 8787;

/** node:crypto's SHA-256: the same digest as Web Crypto's, without its per-call async overhead. */
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
export const DEFAULT_HOST = '127.0.0.1';

/**
 * `tollgate serve [--port N] [--host ADDR]`: loads the config, opens the storage, listens, and only
 * then provisions the default account on first start (printing its keys once on stdout: a start
 * that cannot listen creates nothing), serves until SIGTERM/SIGINT (or `io.waitForShutdown`), then
 * drains (`/readyz` 503 at once, new requests served for the drain delay, in-flight ones until the
 * grace, the rest cut and settled) and resolves 0.
 */
export async function serve(args: string[], io: CliIo, logger?: GatewayLogger): Promise<number> {
  const command = 'serve';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    port: { type: 'string' },
    host: { type: 'string' },
    workers: { type: 'string' },
    ...SHUTDOWN_OPTIONS,
  });
  if (values.help) {
    io.stdout.write(commandUsage(command) ?? '');
    return 0;
  }
  const portText = values.port ?? io.env.PORT;
  const port = portText ? intOption(command, 'port', portText, 0, 65_535) : DEFAULT_PORT;
  const host = values.host ?? (io.env.HOST || DEFAULT_HOST);
  const timings = readServeTimings(values, io.env);
  // The pool of a Postgres that does not answer gives up with the deadline of the storage calls.
  const useStorage = <T>(fn: (storage: Storage) => Promise<T>) =>
    withStorage(values.db, io, fn, { connectTimeoutMs: timings.dbTimeoutMs, create: true });
  const workers = values.workers ? intOption(command, 'workers', values.workers, 1, 64) : 1;
  const log = logger ?? createLogger(io.env, io.stderr);
  const db = dbOption(values.db, io);
  // Every serving process (each worker too) caps its heap's growth, by default as its store
  // suits; see heap-growth.ts.
  const heapGrowingPercent = applyHeapGrowingPercent(
    parseHeapGrowingPercent(io.env.TOLLGATE_HEAP_GROWING_PERCENT, resolveStorageTarget(db, io.cwd).kind),
  );
  const loaded = loadConfig(values.config, io);

  // Armed before anything is printed, so a signal right after the banner still drains.
  const shutdown = (io.waitForShutdown ?? waitForSignal)();
  const isWorker = cluster.isWorker && io.env.TOLLGATE_WORKER === '1';
  // Before any provisioning or fork: the primary creates the secret file its workers then read.
  const serverSecret = await loadServeSecret(db, io, log, !isWorker);
  // Every process serves the dashboard from its own copy in memory; the primary only names it.
  const dashboard = loadDashboardAssets();
  if (!dashboard && !isWorker) {
    log.warn({}, 'the dashboard is not built (run npm run build): /dashboard/ is not served');
  }
  const dashboardUrl = (origin: string) => (dashboard ? `${origin}${DASHBOARD_PATH}/` : null);
  const printBanner = async (firstStart: FirstStartResult | null, url: string) => {
    if (!firstStart) return;
    // The banner offers a local server's models only when it answers now (a bounded probe).
    const answering = await probeLocalProviders(loaded.catalogue);
    const models = modelsOverview(loaded.catalogue, loaded.config.providers, answering);
    io.stdout.write(formatFirstStartBanner(firstStart, url, models, { dashboard: dashboard !== null }));
  };
  if (workers > 1 && !isWorker) {
    // Opened (and migrated) once before forking: a database that cannot be used fails here, once.
    await useStorage(async () => {});
    // The primary provisions once every worker listens (workers never do), so keys are only made
    // when they can be printed next to a working URL.
    return runWorkers({
      count: workers,
      logger: log,
      shutdown,
      // A worker's own drain is bounded by the grace; one stuck past it (and its settles) is ended.
      stopWithinMs: timings.graceMs + 30_000,
      onListening: async (listenPort) => {
        const url = clientOrigin(host, listenPort);
        log.info(
          { url, workers, config: loaded.path, db: describeDb(db, io.cwd), dashboard: dashboardUrl(url) },
          `Tollgate listening on ${url}`,
        );
        await printBanner(await useStorage(provisionFirstStart), url);
      },
      onStartFailure: () =>
        new CliError(`cannot listen on ${host}:${port}: a worker exited before listening`),
    });
  }

  // withStorage closes the storage on every exit path, after the server has drained; serve creates
  // the database on first start.
  return useStorage(async (storage) => {
    const httpClient = createUndiciHttpClient();
    const otlpEndpoint = loaded.config.otlp?.endpoint;
    const telemetry = createServerTelemetry({
      logger: log,
      metrics: loaded.config.metrics,
      models: loaded.catalogue.models.map((model) => model.id),
      batchItems: () => storage.countBatchItems(),
    });
    // The OAuth issuer: the configured public URL, else this process's address once it listens.
    let listeningOrigin: string | undefined;
    const gateway = createGateway(storage, loaded.catalogue, {
      publicUrl: loaded.config.public_url ?? (() => listeningOrigin),
      oauth: {
        approvePage: dashboard ? `${DASHBOARD_PATH}/authorize` : undefined,
        clientCredentialsTtlS: loaded.config.oauth.client_credentials_ttl_s,
      },
      defaultRateLimitRpm: loaded.config.defaults.rate_limit_rpm,
      logger: log,
      observer: telemetry.observer,
      httpClient,
      sha256Hex,
      serverSecret,
      maxBodyBytes: Math.floor(loaded.config.limits.max_request_mb * MB),
      maxAttachmentBytes: Math.floor(loaded.config.limits.max_attachment_mb * MB),
      batches: { concurrency: loaded.config.batches.concurrency, leaseMs: loaded.config.batches.lease_ms },
      storageTimeoutMs: timings.dbTimeoutMs,
      // Its adapter writes JSON answers' bytes as built (`unreadJsonBody`).
      jsonResponse: bufferedJsonResponse,
      ...(otlpEndpoint && { otlp: { endpoint: otlpEndpoint, timeoutMs: loaded.config.otlp?.timeout_ms } }),
    });
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      const metrics = telemetry.metricsEndpoint;
      const { drainDelayMs, graceMs } = timings;
      server = await startServer({
        gateway,
        port,
        host,
        logger: log,
        metrics,
        dashboard,
        drainDelayMs,
        graceMs,
      });
    } catch (error) {
      await gateway.close();
      await httpClient.close();
      throw new CliError(listenFailure(host, port, error));
    }
    listeningOrigin = clientOrigin(host, server.port);
    // Only now that the port is ours: keys made by a start that cannot listen would never be shown,
    // and the next start would see a provisioned database. In a cluster the primary provisions.
    let firstStart: FirstStartResult | null = null;
    if (!isWorker) {
      try {
        firstStart = await provisionFirstStart(storage);
      } catch (error) {
        await server.close();
        await httpClient.close();
        throw error;
      }
    }
    const stopSweep = startExpirySweep(storage, log);
    // Batches left unfinished by a stopped process (or queued by another one) run here too.
    gateway.startBatches();
    const unusable = [...loaded.catalogue.providers.values()]
      .filter((p) => p.apiKey === null && p.format !== 'demo')
      .map((p) => p.id);
    log.info(
      {
        url: server.url,
        config: loaded.path,
        configSource: loaded.source,
        db: describeDb(db, io.cwd),
        models: loaded.catalogue.models.length,
        providersWithoutKey: unusable,
        dashboard: dashboardUrl(server.url),
        heapGrowingPercent,
      },
      `Tollgate listening on ${server.url}`,
    );
    await printBanner(firstStart, clientOrigin(host, server.port));

    const reason = await shutdown;
    log.info(
      { reason, drainDelayMs: timings.drainDelayMs, graceMs: timings.graceMs },
      'shutting down: /readyz answers 503, requests in flight finish (a second signal exits at once)',
    );
    stopSweep();
    await server.close();
    await httpClient.close();
    log.info({}, 'stopped');
    return 0;
  });
}

/** Why listening failed, in words a newcomer can act on (a port in use is the usual case). */
function listenFailure(host: string, port: number, error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') {
    return `cannot listen on ${host}:${port}: the port is already in use (another tollgate?); stop that process or pick another port with --port N`;
  }
  return `cannot listen on ${host}:${port}: ${(error as Error).message}`;
}

/** An origin a client on this machine can use (a wildcard listen address is not one). */
function clientOrigin(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '' ? '127.0.0.1' : host === '::' ? '[::1]' : host;
  return `http://${reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable}:${port}`;
}

/** The database for the log line, without a password. */
function describeDb(db: string, cwd: string): string {
  const target = resolveStorageTarget(db, cwd);
  if (target.kind === 'sqlite') return `sqlite:${target.location}`;
  try {
    const url = new URL(target.location);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return 'postgres';
  }
}
