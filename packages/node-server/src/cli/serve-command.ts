import cluster from 'node:cluster';
import { createHash } from 'node:crypto';
import { createGateway, type GatewayLogger } from '@tollgate/core';
import { runWorkers } from '../cluster/run-workers.js';
import { formatFirstStartBanner, provisionFirstStart } from '../first-start.js';
import { createUndiciHttpClient } from '../http/undici-http-client.js';
import { createLogger } from '../logger.js';
import { resolveStorageTarget } from '../open-storage.js';
import { startServer } from '../server.js';
import { startExpirySweep } from '../sweep-expired.js';
import { CliError } from './cli-errors.js';
import type { CliIo } from './cli-io.js';
import { dbOption, loadConfig, withStorage } from './command-context.js';
import { COMMON_OPTIONS, intOption, parseCommandArgs } from './parse-values.js';
import { USAGE } from './usage.js';

export const DEFAULT_PORT = 8787;

/** node:crypto's SHA-256: the same digest as Web Crypto's, without its per-call async overhead. */
const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
export const DEFAULT_HOST = '127.0.0.1';

/**
 * `tollgate serve [--port N] [--host ADDR]`: loads the config, opens the storage, provisions the
 * default account on first start (printing its keys once on stdout), serves until SIGTERM/SIGINT
 * (or `io.waitForShutdown`), then drains in-flight requests and resolves 0.
 */
export async function serve(args: string[], io: CliIo, logger?: GatewayLogger): Promise<number> {
  const command = 'serve';
  const { values } = parseCommandArgs(command, args, {
    ...COMMON_OPTIONS,
    port: { type: 'string' },
    host: { type: 'string' },
    'drain-timeout-ms': { type: 'string' },
    workers: { type: 'string' },
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const portText = values.port ?? io.env.PORT;
  const port = portText ? intOption(command, 'port', portText, 0, 65_535) : DEFAULT_PORT;
  const host = values.host ?? (io.env.HOST || DEFAULT_HOST);
  const drainTimeoutMs = values['drain-timeout-ms']
    ? intOption(command, 'drain-timeout-ms', values['drain-timeout-ms'], 0, 3_600_000)
    : undefined;
  const workers = values.workers ? intOption(command, 'workers', values.workers, 1, 64) : 1;
  const log = logger ?? createLogger(io.env, io.stderr);
  const loaded = loadConfig(values.config, io);
  const db = dbOption(values.db, io);

  // Armed before anything is printed, so a signal right after the banner still drains.
  const shutdown = (io.waitForShutdown ?? waitForSignal)();
  const isWorker = cluster.isWorker && io.env.TOLLGATE_WORKER === '1';
  if (workers > 1 && !isWorker) {
    const firstStart = await withStorage(values.db, io, provisionFirstStart);
    return runWorkers({
      count: workers,
      logger: log,
      shutdown,
      onListening: (listenPort) => {
        const url = clientOrigin(host, listenPort);
        log.info(
          { url, workers, config: loaded.path, db: describeDb(db, io.cwd) },
          `Tollgate listening on ${url}`,
        );
        if (firstStart) io.stdout.write(formatFirstStartBanner(firstStart, url));
      },
    });
  }

  // withStorage closes the storage on every exit path, after the server has drained.
  return withStorage(values.db, io, async (storage) => {
    // In a cluster the primary provisioned before forking.
    const firstStart = isWorker ? null : await provisionFirstStart(storage);
    const httpClient = createUndiciHttpClient();
    const otlpEndpoint = loaded.config.otlp?.endpoint;
    const gateway = createGateway(storage, loaded.catalogue, {
      defaultRateLimitRpm: loaded.config.defaults.rate_limit_rpm,
      logger: log,
      httpClient,
      sha256Hex,
      ...(otlpEndpoint && { otlp: { endpoint: otlpEndpoint, timeoutMs: loaded.config.otlp?.timeout_ms } }),
    });
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer({ gateway, port, host, logger: log, drainTimeoutMs });
    } catch (error) {
      throw new CliError(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
    }
    const stopSweep = startExpirySweep(storage, log);
    const unusable = [...loaded.catalogue.providers.values()]
      .filter((p) => p.apiKey === null)
      .map((p) => p.id);
    log.info(
      {
        url: server.url,
        config: loaded.path,
        configSource: loaded.source,
        db: describeDb(db, io.cwd),
        models: loaded.catalogue.models.length,
        providersWithoutKey: unusable,
      },
      `Tollgate listening on ${server.url}`,
    );
    if (firstStart) io.stdout.write(formatFirstStartBanner(firstStart, clientOrigin(host, server.port)));

    const reason = await shutdown;
    log.info({ reason }, 'shutting down: draining in-flight requests');
    stopSweep();
    await server.close();
    await httpClient.close();
    log.info({}, 'stopped');
    return 0;
  });
}

/**
 * The first SIGTERM or SIGINT. A second one gets node's default handling (immediate exit), except
 * in a cluster worker: Ctrl+C reaches the whole process group and the primary then sends SIGTERM
 * too, and that second signal must not cut the drain short (the drain has its own time bound).
 */
function waitForSignal(): Promise<string> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      if (cluster.isWorker) {
        process.on('SIGTERM', () => {});
        process.on('SIGINT', () => {});
      }
      resolve(signal);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
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
