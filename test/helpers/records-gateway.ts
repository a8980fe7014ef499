import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import {
  buildCatalogue,
  type Catalogue,
  createGateway,
  type Gateway,
  type GatewayConfig,
  type GatewayLogger,
  type GatewayOptions,
  parseGatewayConfig,
  type Storage,
} from '@tollgate/core';
import { type RunningServer, startServer } from '@tollgate/node-server';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { MockUpstream } from './mock-upstream.js';
import { type OpenedStorage, openSqlite, type StorageVariant, storageVariants } from './storage-variants.js';
import { createTenant, type Tenant, type TenantOptions } from './test-gateway.js';

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
 * A clock for the gateway: real time shifted by a settable offset (so a test can place requests on
 * earlier UTC days), and backoff sleeps that return at once (retries without waiting).
 */
export class ShiftableClock {
  offsetMs = 0;
  constructor(private readonly base: () => number = () => Date.now()) {}
  now(): number {
    return this.base() + this.offsetMs;
  }
  random(): number {
    return 0.5;
  }
  async sleep(_ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) throw signal.reason;
  }
  schedule(fn: () => void, ms: number): () => void {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  }
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

export interface RecordsGatewayOptions {
  otlp?: GatewayOptions['otlp'];
  logger?: GatewayLogger;
  /** Wraps the opened storage before the gateway sees it (e.g. to make `settleRequest` fail). */
  wrapStorage?: (storage: Storage) => Storage;
  clock?: ShiftableClock;
}

export interface RecordsGateway {
  /** The server origin. */
  url: string;
  /** The storage as opened (unwrapped). */
  storage: Storage;
  opened: OpenedStorage;
  /** The SQLite file, when the variant is SQLite. */
  sqlitePath: string | null;
  /** The Postgres schema, when the variant is Postgres. */
  pgSchema: string | null;
  upstream: MockUpstream;
  gateway: Gateway;
  server: RunningServer;
  clock: ShiftableClock;
  catalogue: Catalogue;
  newTenant(options?: TenantOptions): Promise<Tenant>;
  /** The official OpenAI SDK pointed at the gateway, with no retries. */
  client(key: string): OpenAI;
  /** Closes the server (which flushes the exporter and closes storage), the upstream, then the database. */
  close(): Promise<void>;
}

/** Opens `variant`'s storage (keeping the SQLite path), starts the loopback upstream and the real Node server. */
export async function startRecordsGateway(
  variant: StorageVariant,
  options: RecordsGatewayOptions = {},
): Promise<RecordsGateway> {
  let opened: OpenedStorage;
  let sqlitePath: string | null = null;
  let pgSchema: string | null = null;
  if (variant.name === 'sqlite') {
    const sqlite = await openSqlite();
    opened = sqlite;
    sqlitePath = sqlite.path;
  } else {
    const postgres = await openRecordsPostgres(process.env.TEST_DATABASE_URL!);
    opened = postgres;
    pgSchema = postgres.schema;
  }
  const upstream = await new MockUpstream().start();
  const catalogue = buildCatalogue(recordsConfig(upstream.url), {});
  const clock = options.clock ?? new ShiftableClock();
  const logger = options.logger ?? { info() {}, warn() {}, error() {} };
  const storage = options.wrapStorage ? options.wrapStorage(opened.storage) : opened.storage;
  const gateway = createGateway(storage, catalogue, {
    defaultRateLimitRpm: 100_000,
    logger,
    clock,
    ...(options.otlp && { otlp: options.otlp }),
  });
  let server: RunningServer;
  try {
    server = await startServer({
      gateway,
      storage: opened.storage,
      port: 0,
      host: '127.0.0.1',
      logger,
      drainTimeoutMs: 2_000,
    });
  } catch (error) {
    await upstream.stop();
    await opened.storage.close();
    await opened.dispose();
    throw error;
  }
  return {
    url: server.url,
    storage: opened.storage,
    opened,
    sqlitePath,
    pgSchema,
    upstream,
    gateway,
    server,
    clock,
    catalogue,
    newTenant: (tenantOptions) => createTenant(opened.storage, tenantOptions),
    client: (key) => new OpenAI({ apiKey: key, baseURL: `${server.url}/v1`, maxRetries: 0, timeout: 20_000 }),
    async close() {
      try {
        await server.close();
      } finally {
        await upstream.stop();
        await opened.dispose();
      }
    },
  };
}

/** A fresh, randomly named schema on `connectionString`'s server (dropped by `dispose`), with its name. */
async function openRecordsPostgres(connectionString: string): Promise<OpenedStorage & { schema: string }> {
  const { createPostgresStorage } = await import('@tollgate/storage-postgres');
  const schema = `tollgate_records_${randomBytes(6).toString('hex')}`;
  const storage = await createPostgresStorage({ connectionString, schema });
  return {
    storage,
    schema,
    dump: () => dumpPostgresSchema(connectionString, schema),
    dispose: () =>
      withPgClient(connectionString, async (client) => {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      }),
  };
}

async function withPgClient<T>(connectionString: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

/**
 * Every table of the schema: each row as text, then every column of every table cast to text one
 * by one (text, json, bytea, arrays and all the rest), so nothing a row holds is missed.
 */
function dumpPostgresSchema(connectionString: string, schema: string): Promise<Buffer> {
  return withPgClient(connectionString, async (client) => {
    const out: string[] = [];
    const tables = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1`,
      [schema],
    );
    for (const { table_name } of tables.rows) {
      const rows = await client.query<{ row: string }>(
        `SELECT t::text AS row FROM "${schema}"."${table_name}" t`,
      );
      for (const { row } of rows.rows) out.push(row);
    }
    const columns = await client.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = $1`,
      [schema],
    );
    for (const { table_name, column_name } of columns.rows) {
      const rows = await client.query<{ v: string | null }>(
        `SELECT "${column_name}"::text AS v FROM "${schema}"."${table_name}"`,
      );
      for (const { v } of rows.rows) if (v !== null) out.push(v);
    }
    return Buffer.from(out.join('\n'));
  });
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
  const response = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
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
  for (const variant of storageVariants) {
    const skip = variant.skipReason;
    if (skip) console.info(`[e2e] "${title}" on ${variant.name} is skipped: ${skip}`);
    describe.skipIf(Boolean(skip))(`${title} [${variant.name}]${skip ? ` (skipped: ${skip})` : ''}`, () => {
      let gateway: RecordsGateway | undefined;
      beforeAll(async () => {
        gateway = await startRecordsGateway(variant, options(variant));
      });
      afterAll(async () => {
        await gateway?.close();
      });
      body(() => {
        if (!gateway) throw new Error('the records gateway did not start');
        return gateway;
      }, variant);
    });
  }
}
