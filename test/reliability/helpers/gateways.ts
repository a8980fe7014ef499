import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createApiKey,
  type Gateway,
  type GatewayLogger,
  type GatewayOptions,
  parseGatewayConfig,
  type Storage,
  type WalkClock,
} from '@tollgate/core';
import type { RunningServer } from '@tollgate/node-server';
import { CliProcess, cliEnv, serveArgs, serverSecretEnv } from '../../helpers/cli-process.js';
import { startGatewayUnderTest } from '../../helpers/gateway-under-test.js';
import type { OpenedStorage } from '../../helpers/storage-variants.js';
import { Prng } from './seed.js';

/** Chaos catalogue prices, micro-dollars per million tokens: prompt 1 USD, completion 2 USD, cached 0.5 USD. */
export const CHAOS_PRICES = { prompt: 1_000_000, completion: 2_000_000, cachedPrompt: 500_000 };

/**
 * The config every reliability server runs: OpenAI-format providers on the chaos upstream
 * (`c1`, `c2` with a 250 ms time-to-first-byte limit, `c3`), and the models
 * `chaos/duo` (c1 → c2, so failover happens), `chaos/solo` (c3 only, so full failures happen) and
 * `chaos/exact` (c3, a small output ceiling, for limit arithmetic).
 */
export function chaosConfig(upstreamUrl: string, extra: Record<string, unknown> = {}) {
  const pricing = { prompt: '1', completion: '2', cached_prompt: '0.5' };
  return {
    providers: {
      c1: { format: 'openai', base_url: `${upstreamUrl}/c1/v1`, api_key: 'sk-chaos-c1' },
      c2: { format: 'openai', base_url: `${upstreamUrl}/c2/v1`, api_key: 'sk-chaos-c2', timeout_ms: 250 },
      c3: { format: 'openai', base_url: `${upstreamUrl}/c3/v1`, api_key: 'sk-chaos-c3' },
    },
    models: [
      {
        id: 'chaos/duo',
        max_output_tokens: 1000,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'c1', upstream_model: 'duo-c1', pricing },
          { provider: 'c2', upstream_model: 'duo-c2', pricing },
        ],
      },
      {
        id: 'chaos/solo',
        max_output_tokens: 1000,
        capabilities: { tools: true },
        endpoints: [{ provider: 'c3', upstream_model: 'solo-c3', pricing }],
      },
      {
        id: 'chaos/exact',
        max_output_tokens: 100,
        capabilities: { tools: true },
        endpoints: [{ provider: 'c3', upstream_model: 'exact-c3', pricing }],
      },
    ],
    defaults: { rate_limit_rpm: 1_000_000 },
    billing: { top_up_fee_percent: '0' },
    ...extra,
  };
}

/** Writes a config file into `dir` and returns its path. */
export function writeConfig(dir: string, config: unknown, name = 'tollgate.config.json'): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

/**
 * The gateway's clock for in-process runs: real time and real timers (so per-attempt timeouts are
 * real), seeded jitter, and backoff / `Retry-After` waits cut to at most `maxSleepMs` (so a
 * `Retry-After: 1` costs milliseconds, not a second). Every wait asked for is recorded.
 */
export class QuickClock implements WalkClock {
  readonly asked: number[] = [];
  offsetMs = 0;
  private readonly prng: Prng;

  constructor(
    seed: number,
    private readonly maxSleepMs = 5,
  ) {
    this.prng = new Prng(seed);
  }

  now(): number {
    return Date.now() + this.offsetMs;
  }

  random(): number {
    return this.prng.next();
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    this.asked.push(ms);
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      const timer = setTimeout(
        () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        Math.min(ms, this.maxSleepMs),
      );
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  schedule(fn: () => void, ms: number): () => void {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  }
}

/** Keeps every log line (as JSON text) so a check can read what the gateway logged. */
export class CollectingLogger implements GatewayLogger {
  readonly lines: string[] = [];
  info(obj: object, msg?: string): void {
    this.lines.push(JSON.stringify({ level: 'info', msg, ...obj }));
  }
  warn(obj: object, msg?: string): void {
    this.lines.push(JSON.stringify({ level: 'warn', msg, ...obj }));
  }
  error(obj: object, msg?: string): void {
    this.lines.push(JSON.stringify({ level: 'error', msg, ...obj }));
  }
}

export interface InProcessGateway {
  url: string;
  gateway: Gateway;
  server: RunningServer;
  /** Stops accepting, drains in-flight requests (bounded), closes the upstream pool. Leaves the storage open. */
  close(): Promise<void>;
}

/**
 * The shared builder's gateway served by the real Node server (the undici upstream client
 * `tollgate serve` uses) over a storage the caller owns, on an ephemeral loopback port: in the test's
 * process, where `startServeProcess` below spawns the CLI.
 */
export async function startInProcessGateway(
  storage: Storage,
  config: unknown,
  options: Pick<GatewayOptions, 'clock' | 'logger' | 'maxBodyBytes' | 'otlp' | 'reservationTtlMs'> = {},
): Promise<InProcessGateway> {
  const parsed = parseGatewayConfig(config);
  const { clock, logger, ...gatewayOptions } = options;
  const gw = await startGatewayUnderTest<OpenedStorage, WalkClock>({
    config: parsed,
    storage,
    undici: true,
    ...(clock && { clock }),
    ...(logger && { logger }),
    gateway: { defaultRateLimitRpm: parsed.defaults.rate_limit_rpm, ...gatewayOptions },
    serve: { graceMs: 10_000 },
  });
  return { url: gw.url, gateway: gw.gateway, server: gw.server!, close: gw.close };
}

/** Another inference key of an account. */
export async function newKey(
  storage: Storage,
  accountId: string,
  options: { name?: string; rateLimitRpm?: number | null; spendLimitMicros?: number | null } = {},
): Promise<{ id: string; secret: string }> {
  const { key, secret } = await createApiKey(storage, {
    accountId,
    name: options.name ?? 'reliability',
    scope: 'inference',
    env: 'live',
    rateLimitRpm: options.rateLimitRpm ?? null,
    spendLimitMicros: options.spendLimitMicros ?? null,
  });
  return { id: key.id, secret };
}

const LISTENING = /Tollgate listening on (http:\/\/[0-9.]+:\d+)/;

/** One `tollgate serve` child process (the real CLI from its TypeScript source), with its output. */
export interface ServeProcess {
  process: CliProcess;
  url: string;
  pid: number;
  /** Everything it wrote so far, stdout then stderr. */
  output(): string;
}

/**
 * Spawns `node --import tsx packages/node-server/src/cli.ts serve --port 0 --db … --config …` and
 * waits (bounded) for its "listening" log line on stderr.
 */
export async function spawnServe(
  db: string,
  config: string,
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<ServeProcess> {
  const child = new CliProcess(serveArgs(db, config, 3_000), cliEnv({ ...serverSecretEnv(db), ...env }));
  const timeout = new Promise<never>((_, reject) =>
    setTimeout(
      () => reject(new Error(`no "listening" line within ${timeoutMs} ms:\n${child.stderr}`)),
      timeoutMs,
    ).unref(),
  );
  try {
    const match = await Promise.race([child.waitFor(LISTENING, 'stderr'), timeout]);
    return {
      process: child,
      url: match[1]!,
      pid: child.child.pid!,
      output: () => `${child.stdout}\n${child.stderr}`,
    };
  } catch (error) {
    await child.stop('SIGKILL');
    throw error;
  }
}
