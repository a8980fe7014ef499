import { existsSync, readFileSync } from 'node:fs';
import {
  type GatewayConfig,
  type GatewayLogger,
  type GatewayOptions,
  parseGatewayConfig,
  type Storage,
} from '@tollgate/core';
import { fetchGatewayAt } from './in-process-origins.js';
import { InstantClock } from './instant-clock.js';
import {
  describeOnEachVariant,
  type E2eGateway,
  silentLogger,
  startE2eGateway,
} from './start-e2e-gateway.js';
import { type OpenedStorage, openPostgres, openSqlite, type StorageVariant } from './storage-variants.js';

/** Upstream paths of the three loopback providers (queue keys of the `MockUpstream`). */
export const PATHS = {
  /** OpenAI-format provider `oa`. */
  oa: '/oa/v1/chat/completions',
  /** Anthropic-format provider `an`. */
  an: '/an/v1/messages',
  /** OpenAI-format provider `flaky` (the only route of `acme/flaky`). */
  flaky: '/flaky/v1/chat/completions',
} as const;

/** Prices of the records catalogue, in micro-dollars per million tokens (what the config strings parse to). */
export const PRICES = {
  'acme/chat': { prompt: 150_000, completion: 600_000, cachedPrompt: 75_000 },
  'claude/sonnet': { prompt: 3_000_000, completion: 15_000_000, cachedPrompt: 300_000 },
  'acme/flaky': { prompt: 1_000_000, completion: 2_000_000, cachedPrompt: null },
} as const;

/**
 * The cost of a request in micros, computed independently of the gateway (spec Cost rules 2–3):
 * uncached prompt, cached prompt and completion at full precision, rounded up once.
 */
export function expectedCostMicros(
  model: keyof typeof PRICES,
  usage: { prompt: number; completion: number; cached?: number },
): number {
  const p = PRICES[model];
  const cached = usage.cached ?? 0;
  const total =
    BigInt(usage.prompt - cached) * BigInt(p.prompt) +
    BigInt(cached) * BigInt(p.cachedPrompt ?? p.prompt) +
    BigInt(usage.completion) * BigInt(p.completion);
  return Number((total + 999_999n) / 1_000_000n);
}

function recordsConfig(upstreamUrl: string): GatewayConfig {
  return parseGatewayConfig({
    providers: {
      oa: { format: 'openai', base_url: `${upstreamUrl}/oa/v1`, api_key: 'sk-oa-records' },
      an: { format: 'anthropic', base_url: `${upstreamUrl}/an/v1`, api_key: 'sk-an-records' },
      flaky: { format: 'openai', base_url: `${upstreamUrl}/flaky/v1`, api_key: 'sk-flaky-records' },
    },
    models: [
      {
        id: 'acme/chat',
        max_output_tokens: 4096,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'oa',
            upstream_model: 'gpt-4o-mini',
            pricing: { prompt: '0.15', completion: '0.60', cached_prompt: '0.075' },
          },
        ],
      },
      {
        id: 'claude/sonnet',
        max_output_tokens: 8192,
        capabilities: { tools: true },
        endpoints: [
          {
            provider: 'an',
            upstream_model: 'claude-sonnet-4-20250514',
            pricing: { prompt: '3', completion: '15', cached_prompt: '0.30' },
          },
        ],
      },
      {
        id: 'acme/flaky',
        max_output_tokens: 1000,
        capabilities: { tools: true },
        endpoints: [
          { provider: 'flaky', upstream_model: 'flaky-1', pricing: { prompt: '1', completion: '2' } },
        ],
      },
    ],
    defaults: { rate_limit_rpm: 100_000 },
  });
}

/**
 * The records gateway's clock: real time shifted by a settable `offsetMs` (so a test can place
 * requests on earlier UTC days), jitter 0.5, and backoff sleeps that return at once.
 */
export function shiftableClock(): InstantClock {
  return new InstantClock(() => 0.5);
}

/** A logger that keeps every line it is given, as the JSON text it would have written. */
export class CapturingLogger implements GatewayLogger {
  readonly lines: string[] = [];
  info(obj: object, msg?: string): void {
    this.lines.push(JSON.stringify({ level: 'info', msg, ...obj }, errorReplacer));
  }
  warn(obj: object, msg?: string): void {
    this.lines.push(JSON.stringify({ level: 'warn', msg, ...obj }, errorReplacer));
  }
  error(obj: object, msg?: string): void {
    this.lines.push(JSON.stringify({ level: 'error', msg, ...obj }, errorReplacer));
  }
}

/** Errors serialised with their message and stack (as pino would), so nothing they hold escapes a check. */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    return { name: value.name, message: value.message, stack: value.stack, cause: value.cause };
  }
  return value;
}

/** Options of the records gateway. */
export interface RecordsGatewayOptions {
  /** `false`: in-process, requests straight to `gateway.fetch` (default: the real Node server). */
  serve?: boolean;
  otlp?: GatewayOptions['otlp'];
  logger?: GatewayLogger;
  /** Wraps the opened storage before the gateway sees it (e.g. to make `settleRequest` fail). */
  wrapStorage?: (storage: Storage) => Storage;
  clock?: InstantClock;
}

/** The shared end-to-end gateway on the records catalogue, with where its database lives. */
export interface RecordsGateway extends E2eGateway {
  /** The SQLite file, when the variant is SQLite. */
  sqlitePath: string | null;
  /** The Postgres schema, when the variant is Postgres. */
  pgSchema: string | null;
}

/**
 * Opens `variant`'s storage (keeping the SQLite path), starts the loopback upstream and the gateway,
 * served by the real Node server unless `options.serve` is `false`.
 */
export async function startRecordsGateway(
  variant: StorageVariant,
  options: RecordsGatewayOptions = {},
): Promise<RecordsGateway> {
  let sqlitePath: string | null = null;
  let pgSchema: string | null = null;
  const open = async (): Promise<OpenedStorage> => {
    if (variant.name === 'sqlite') {
      const sqlite = await openSqlite();
      sqlitePath = sqlite.path;
      return sqlite;
    }
    // Every column dumped too, so nothing a row holds is missed by the "never landed" checks.
    const postgres = await openPostgres(process.env.TEST_DATABASE_URL!, {
      prefix: 'tollgate_records',
      everyColumn: true,
    });
    pgSchema = postgres.schema;
    return postgres;
  };
  const gw = await startE2eGateway({
    config: recordsConfig,
    open,
    clock: options.clock ?? shiftableClock(),
    logger: options.logger ?? silentLogger,
    gateway: { defaultRateLimitRpm: 100_000, ...(options.otlp && { otlp: options.otlp }) },
    ...(options.wrapStorage && { wrapStorage: options.wrapStorage }),
    ...(options.serve === false && { serve: false }),
  });
  return { ...gw, sqlitePath, pgSchema };
}

/**
 * Every byte the database holds, for "this string never landed" checks: the SQLite file with its
 * `-wal` and `-shm` files read raw; on Postgres every row and every column of every table of the
 * schema, as text.
 */
export async function dumpDatabase(gw: RecordsGateway): Promise<Buffer> {
  if (gw.sqlitePath) {
    const file = gw.sqlitePath;
    return Buffer.concat(
      [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]
        .filter((p) => existsSync(p))
        .map((p) => readFileSync(p)),
    );
  }
  return gw.opened.dump();
}

/** `GET` with a bearer key; the parsed JSON body and status. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary response shapes.
export async function getJson(url: string, key: string): Promise<{ status: number; body: any }> {
  const response = await fetchGatewayAt(url, { headers: { authorization: `Bearer ${key}` } });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

/**
 * Declares `body` once per storage variant with its own records gateway, started before the first
 * test and closed after the last. A variant without its prerequisites is skipped, with the reason
 * printed and in the suite's title.
 */
export function describeRecords(
  title: string,
  body: (gw: () => RecordsGateway, variant: StorageVariant) => void,
  options: (variant: StorageVariant) => RecordsGatewayOptions = () => ({}),
): void {
  describeOnEachVariant(title, (variant) => startRecordsGateway(variant, options(variant)), body);
}
