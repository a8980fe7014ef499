import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { type ServerProcess, startServer } from './child-process.js';

/*
 * Tollgate as production runs it: `node packages/node-server/dist/cli.js serve`, on a fresh SQLite
 * file or a fresh Postgres database, with a bench account (a huge balance) and an inference key
 * (a very high rate limit) provisioned through the CLI. Every request is metered as usual.
 */

export const CLI = join(import.meta.dirname, '..', 'packages', 'node-server', 'dist', 'cli.js');

export const MODEL = 'openai/gpt-4o-mini';
export const PACED_MODEL = 'bench/paced-stream';
export const EMBEDDING_MODEL = 'openai/text-embedding-3-small';
const run = promisify(execFile);

/**
 * The CLI a bench process runs: this checkout's build, or `BENCH_TOLLGATE_CLI` when set. Read at
 * each call, so that `bench:ab` can compare two builds (`base=BENCH_TOLLGATE_CLI=<other
 * checkout>/packages/node-server/dist/cli.js`).
 */
function cliPath(): string {
  return process.env.BENCH_TOLLGATE_CLI || CLI;
}
/** The server secret of a bench server on Postgres when the environment gives none. */
const BENCH_SECRET = 'tollgate-bench-server-secret-0123456789abcdef';

export type BenchDb = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string; name: string };

/** The config: one provider (the mock), and real chat and embedding model ids with their real prices. */
export function writeConfig(dir: string, mockUrl: string): string {
  const pricing = { prompt: '0.15', completion: '0.60', cached_prompt: '0.075' };
  const model = (id: string, upstream: string) => ({
    id,
    context_length: 128000,
    max_output_tokens: 16384,
    endpoints: [{ provider: 'mock', upstream_model: upstream, pricing }],
  });
  // Called at `POST {base_url}/embeddings`; $0.02 per million input tokens, so each request costs 1 µ$.
  const embedding = {
    id: EMBEDDING_MODEL,
    type: 'embedding',
    context_length: 8192,
    endpoints: [{ provider: 'mock', upstream_model: 'text-embedding-3-small', pricing: { prompt: '0.02' } }],
  };
  const config = {
    providers: { mock: { format: 'openai', base_url: `${mockUrl}/v1`, api_key: 'sk-bench-upstream' } },
    models: [model(MODEL, 'gpt-4o-mini'), model(PACED_MODEL, 'paced-gpt-4o-mini'), embedding],
    defaults: { rate_limit_rpm: 1_000_000 },
  };
  const path = join(dir, 'tollgate.bench.config.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return path;
}

async function cli(args: string[], db: string, config: string): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    [cliPath(), ...args, '--db', db, '--config', config, '--json'],
    {
      timeout: 60_000,
    },
  );
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Creates the bench account ($1,000,000) and its inference key; returns the key's secret. */
export async function provision(db: string, config: string, name = 'bench'): Promise<string> {
  // `--create`: the first account of a round makes its fresh SQLite database (a no-op on Postgres).
  const account = await cli(
    ['account', 'create', '--name', name, '--credit-usd', '1000000', '--create'],
    db,
    config,
  );
  const key = await cli(
    ['key', 'create', '--account', String(account.id), '--name', name, '--rate-limit-rpm', '1000000'],
    db,
    config,
  );
  return String(key.key);
}

/** `tenants` bench accounts, each with its own key (`provision`); returns their keys' secrets. */
export async function provisionTenants(db: string, config: string, tenants: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < tenants; i++)
    keys.push(await provision(db, config, tenants === 1 ? 'bench' : `bench-${i}`));
  return keys;
}

/** Whether this build's `serve` knows `--workers`. */
export async function supportsWorkers(): Promise<boolean> {
  const { stdout } = await run(process.execPath, [cliPath(), '--help'], { timeout: 30_000 });
  return stdout.includes('--workers');
}

/**
 * `tollgate serve --port 0` on the database; resolves once it logs the URL it listens on.
 * `nodeOptions` (say `--max-semi-space-size=4`) reaches the server and its workers as NODE_OPTIONS.
 */
export function serve(
  label: string,
  db: string,
  config: string,
  workers: number,
  nodeOptions?: string,
): Promise<ServerProcess> {
  const args = [cliPath(), 'serve', '--port', '0', '--db', db, '--config', config];
  if (workers > 1) args.push('--workers', String(workers));
  // Serving Postgres needs TOLLGATE_SECRET (the same in every process); SQLite makes its own file.
  const secret =
    db.startsWith('postgres') && !process.env.TOLLGATE_SECRET ? { TOLLGATE_SECRET: BENCH_SECRET } : {};
  return startServer(label, args, (line) => line.match(/listening on (http:\/\/[^\s"]+)/)?.[1] ?? null, {
    timeoutMs: 60_000,
    env: { ...secret, ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}) },
  });
}

export function dbLocation(db: BenchDb): string {
  return db.kind === 'sqlite' ? db.path : db.url;
}

/** Connects to the server of `adminUrl` within 3 s, or says why not. */
export async function postgresReachable(adminUrl: string): Promise<string | null> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (error) {
    return (error as Error).message || String(error);
  } finally {
    await client.end().catch(() => {});
  }
}

async function adminQuery(adminUrl: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** A fresh, empty database on the server of `adminUrl`, dropped again by `dropPostgresDb`. */
export async function createPostgresDb(adminUrl: string): Promise<BenchDb & { kind: 'postgres' }> {
  const name = `tollgate_bench_${Date.now()}_${process.pid}`;
  await adminQuery(adminUrl, `CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', url: url.toString(), name };
}

export async function dropPostgresDb(adminUrl: string, db: { name: string }): Promise<void> {
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`);
}
