import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { vi } from 'vitest';
import { CliProcess, cliEnv, runCli, serveArgs, serverSecretEnv } from './cli-process.js';
import { withPgClient } from './storage-variants.js';

/*
 * A process launcher, not a gateway builder: what is tested here is several `tollgate serve`
 * processes (the real CLI, each its own process) on one database. A gateway inside the test's own
 * process is built by `startGatewayUnderTest` (gateway-under-test.ts), in-process or served.
 */

/** A database of its own on the server of `adminUrl`, created now and dropped by `drop()`. */
export interface ScratchDatabase {
  name: string;
  /** `adminUrl` with the database name replaced. */
  url: string;
  /** Runs one query on the scratch database. */
  query<T extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** `CREATE DATABASE tollgate_e2e_<random>` through `pg`. */
export async function createScratchDatabase(adminUrl: string): Promise<ScratchDatabase> {
  const name = `tollgate_e2e_${randomBytes(6).toString('hex')}`;
  await withPgClient(adminUrl, (client) => client.query(`CREATE DATABASE "${name}"`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const scratchUrl = url.toString();
  return {
    name,
    url: scratchUrl,
    query: (sql, params) =>
      withPgClient(scratchUrl, async (client) => (await client.query(sql, params)).rows),
    drop: () =>
      withPgClient(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}

/**
 * The config the multi-process suites serve: one paid model (`acme/paid`, $1 / $2 per million
 * tokens) on the mock's `mp` provider, and a default rpm high enough never to refuse.
 */
export function paidModelConfig(mockUrl: string) {
  return {
    providers: { mp: { format: 'openai', base_url: `${mockUrl}/mp/v1`, api_key: 'sk-mp' } },
    models: [
      {
        id: 'acme/paid',
        max_output_tokens: 1000,
        endpoints: [{ provider: 'mp', upstream_model: 'mp-1', pricing: { prompt: '1', completion: '2' } }],
      },
    ],
    defaults: { rate_limit_rpm: 100_000 },
  };
}

/** A temp dir holding a config file; `remove()` deletes it. */
export function writeTempConfig(config: unknown): { path: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-mp-'));
  const path = join(dir, 'tollgate.config.json');
  writeFileSync(path, JSON.stringify(config, null, 2));
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a `--json` CLI command and returns the one JSON object it printed. */
export async function cliJson(args: string[]): Promise<Record<string, string>> {
  const result = await runCli([...args, '--json'], cliEnv());
  if (result.code !== 0) {
    throw new Error(`tollgate ${args.join(' ')} exited ${result.code}\n${result.stderr}`);
  }
  return JSON.parse(result.stdout.trim());
}

const LISTENING = /Tollgate listening on (http:\/\/[0-9.]+:\d+)/;

/** One `tollgate serve --port 0` process, with the URL it printed on stderr. */
export interface ServeProcess {
  process: CliProcess;
  url: string;
  pid: number;
}

/** Spawns `tollgate serve --port 0 --db <db> --config <config>` and waits for its "listening" line. */
export async function startServeProcess(db: string, config: string): Promise<ServeProcess> {
  const process = new CliProcess(serveArgs(db, config, 2_000), cliEnv(serverSecretEnv(db)));
  try {
    const url = await vi.waitFor(
      () => {
        if (!process.running) {
          throw new Error(`serve exited early\nstdout:\n${process.stdout}\nstderr:\n${process.stderr}`);
        }
        const match = process.stderr.match(LISTENING);
        if (!match) throw new Error(`no "listening" line yet on stderr:\n${process.stderr}`);
        return match[1]!;
      },
      { timeout: 25_000, interval: 50 },
    );
    return { process, url, pid: process.child.pid! };
  } catch (error) {
    await process.stop('SIGKILL');
    throw error;
  }
}
