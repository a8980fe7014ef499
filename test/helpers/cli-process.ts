import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root, found from this file's location (never an absolute path). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** The CLI entry, relative to the repo root, run from its TypeScript source through tsx. */
export const CLI_ENTRY = 'packages/node-server/src/cli.ts';

/**
 * The command `npm start` ends in (after building what is stale), from the repo root: the built
 * CLI's `serve`. The Dockerfile's `CMD` is the same command.
 */
export const START_COMMAND = 'node packages/node-server/dist/cli.js serve';

/** The bundled example config, relative to the repo root. */
export const EXAMPLE_CONFIG = 'packages/node-server/tollgate.config.example.json';

/**
 * The environment of a CLI child: ours, minus everything that would pick another db, config or
 * port, and with no drain delay (no load balancer waits for a test server's `/readyz`) unless told.
 */
export function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'info',
    TOLLGATE_DRAIN_DELAY_MS: '0',
    ...extra,
  };
  for (const name of [
    'DATABASE_URL',
    'TOLLGATE_CONFIG',
    'PORT',
    'HOST',
    'OTEL_EXPORTER_OTLP_ENDPOINT',
    'NODE_OPTIONS',
    'TOLLGATE_SECRET',
  ]) {
    if (!(name in extra)) delete env[name];
  }
  return env;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Spawns `tollgate <args>` from the repo root. */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = cliEnv()): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs `tollgate <args>` to completion. */
export function runCli(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult> {
  const child = spawnCli(args, env);
  return collect(child);
}

/** Resolves with the child's output once it has exited. */
export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A long-running CLI child (e.g. `serve`) with its output so far. */
export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<CliResult>;
  private waiters: (() => void)[] = [];

  /** `spawn` starts the child (default: `tollgate <args>` from its TypeScript sources). */
  constructor(
    args: string[],
    env?: NodeJS.ProcessEnv,
    spawn: (args: string[], env?: NodeJS.ProcessEnv) => ChildProcess = spawnCli,
  ) {
    this.child = spawn(args, env);
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      this.notify();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      this.notify();
    });
    this.exited = new Promise((resolve, reject) => {
      this.child.once('error', reject);
      this.child.once('close', (code, signal) => {
        this.notify();
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr });
      });
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Resolves with the first match of `pattern` in stdout or stderr (as `where` says); rejects when
   * the process exits first, with its output in the message.
   */
  async waitFor(pattern: RegExp, where: 'stdout' | 'stderr'): Promise<RegExpMatchArray> {
    for (;;) {
      const match = this[where].match(pattern);
      if (match) return match;
      if (!this.running) {
        throw new Error(
          `the process exited (${this.child.exitCode ?? this.child.signalCode}) before ${where} matched ${pattern}\n` +
            `stdout:\n${this.stdout}\nstderr:\n${this.stderr}`,
        );
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Sends `signal` (this process only, by its handle) and waits for the exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<CliResult> {
    if (this.running) this.child.kill(signal);
    return this.exited;
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/**
 * The `TOLLGATE_SECRET` of the test servers on Postgres, where serve requires one (every process on
 * a database shares it); SQLite serves make their own file beside the database.
 */
export const TEST_SERVER_SECRET = 'tollgate-test-server-secret-0123456789abcdef';

/** `{ TOLLGATE_SECRET }` for a serve on a Postgres `db`, else nothing. */
export function serverSecretEnv(db: string): Record<string, string> {
  return /^postgres(ql)?:\/\//i.test(db) ? { TOLLGATE_SECRET: TEST_SERVER_SECRET } : {};
}

/** The arguments of `tollgate serve` on an ephemeral loopback port over `db` and `config`. */
export function serveArgs(db: string, config: string, graceMs: number): string[] {
  return [
    'serve',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--db',
    db,
    '--config',
    config,
    '--grace-ms',
    String(graceMs),
  ];
}
