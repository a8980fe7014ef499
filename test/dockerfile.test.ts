import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliEnv, REPO_ROOT, START_COMMAND } from './helpers/cli-process.js';
import { call } from './helpers/http.js';

/** One instruction of a Dockerfile (continuation lines joined). */
interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's stages, each a list of instructions, in order. */
function stagesOf(text: string): { name: string; from: string; steps: Instruction[] }[] {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: { name: string; from: string; steps: Instruction[] }[] = [];
  for (const line of lines) {
    const [, keyword, args] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!keyword || args === undefined) continue;
    if (keyword === 'FROM') {
      const [from, , name] = args.split(/\s+/);
      stages.push({ name: name ?? '', from: from!, steps: [] });
    } else {
      stages.at(-1)?.steps.push({ keyword, args: args.replace(/\s+/g, ' ') });
    }
  }
  return stages;
}

const dockerfile = readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8');
const stages = stagesOf(dockerfile);
const runtime = stages.at(-1)!;
const steps = (keyword: string) => runtime.steps.filter((s) => s.keyword === keyword);

/**
 * What can be checked of the image without a Docker engine: the runtime stage's settings, that its
 * `CMD` is the command the tests start, and that its files — copied as its `COPY --from=build`
 * lines say, then `npm ci` as its `RUN` says — make a server that starts and is ready.
 */
describe('the Dockerfile', () => {
  it('builds in stages; the runtime stage runs Node 20 slim as a non-root user, ready on /readyz', () => {
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    expect(runtime.from).toMatch(/^node:20(\.[\d.]+)?-(bookworm-|bullseye-)?slim$/);
    const user = steps('USER').at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    expect(steps('EXPOSE').map((s) => s.args)).toEqual(['8787']);
    const env = steps('ENV')
      .map((s) => s.args)
      .join(' ');
    expect(env).toMatch(/\bHOST=0\.0\.0\.0\b/);
    expect(env).toMatch(/\bDATABASE_URL=\/data\/\S+\.db\b/);
    expect(steps('VOLUME').map((s) => s.args)).toEqual(['["/data"]']);
    expect(steps('HEALTHCHECK')[0]?.args).toContain('/readyz');
    expect(steps('RUN').some((s) => /\bnpm ci\b.*--omit=dev\b/.test(s.args))).toBe(true);
  });

  it("the CMD is the command npm start ends in and the tests start: the built CLI's serve", () => {
    expect((JSON.parse(steps('CMD')[0]!.args) as string[]).join(' ')).toBe(START_COMMAND);
    const start = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).scripts.start;
    expect(start.endsWith(`exec ${START_COMMAND}`)).toBe(true);
  });

  it('compose.yaml: Postgres and two replicas sharing one server secret, each given longer than delay + grace to stop', () => {
    const compose = readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8');
    for (const service of ['postgres', 'gateway-1', 'gateway-2']) {
      expect(compose).toMatch(new RegExp(`^  ${service}:$`, 'm'));
    }
    // One anchor of settings for both replicas: the same DATABASE_URL and TOLLGATE_SECRET.
    expect(compose.match(/<<: \*gateway/g)).toHaveLength(2);
    expect(compose).toMatch(/^ {4}DATABASE_URL: postgres:\/\//m);
    expect(compose).toMatch(/^ {4}TOLLGATE_SECRET: \$\{TOLLGATE_SECRET:\?/m);
    const stopSeconds = Number(/stop_grace_period: (\d+)s/.exec(compose)?.[1]);
    expect(stopSeconds).toBeGreaterThan(5 + 60);
  });

  it('.dockerignore keeps installs, builds, databases, secrets and the local config out of the context', () => {
    const ignored = readFileSync(join(REPO_ROOT, '.dockerignore'), 'utf8').split('\n');
    for (const pattern of [
      '**/node_modules',
      '**/dist',
      '**/*.db',
      '**/*.db.secret',
      'tollgate.config.json',
      '.git',
    ]) {
      expect(ignored).toContain(pattern);
    }
  });
});

describe('the runtime stage, assembled in a scratch directory', () => {
  let scratch: string;
  let server: CliProcess | undefined;

  beforeAll(() => {
    // The build stage's output: this checkout's dist/ (built now if stale).
    const built = spawnSync(process.execPath, ['scripts/build-if-stale.mjs'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    expect(built.status, built.stderr).toBe(0);
    scratch = mkdtempSync(join(tmpdir(), 'tollgate-image-'));
    for (const step of runtime.steps) {
      if (step.keyword === 'COPY') {
        const parts = step.args.split(' ');
        expect(parts[0], `a runtime COPY takes only from the build stage: ${step.args}`).toBe('--from=build');
        const destination = parts.at(-1)!;
        for (const source of parts.slice(1, -1)) {
          const from = join(REPO_ROOT, source.replace(/^\/app\//, ''));
          const to = destination.endsWith('/')
            ? join(scratch, destination, source.split('/').at(-1)!)
            : join(scratch, destination);
          mkdirSync(dirname(to), { recursive: true });
          cpSync(from, to, { recursive: true });
        }
      } else if (step.keyword === 'RUN') {
        // Only the install: the other commands touch the image's system paths (/data) or its cache.
        const install = step.args.split('&&').find((command) => /^\s*npm ci\b/.test(command));
        if (!install) continue;
        // From this machine's npm cache: the registry is not needed to check what gets installed.
        const args = [...install.trim().split(' ').slice(1), '--offline'];
        const installed = spawnSync('npm', args, { cwd: scratch, encoding: 'utf8' });
        expect(installed.status, installed.stderr).toBe(0);
      }
    }
  }, 300_000);

  afterAll(async () => {
    if (server?.running) await server.stop('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  it('has what the CMD loads, and not the development tools', () => {
    for (const path of [
      'packages/node-server/dist/cli.js',
      'packages/node-server/tollgate.config.example.json',
      'packages/dashboard/dist/index.html',
      'node_modules/@tollgate/core/dist/index.js',
      'node_modules/@tollgate/storage-sqlite/dist/index.js',
      'node_modules/@tollgate/storage-postgres/dist/index.js',
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
      'node_modules/pg/package.json',
    ]) {
      expect(existsSync(join(scratch, path)), path).toBe(true);
    }
    // Every file a package in the image publishes (its `files`) is there too: the storage adapters
    // read their SQL at run time.
    for (const name of readdirSync(join(REPO_ROOT, 'packages'))) {
      if (!existsSync(join(scratch, 'packages', name, 'package.json'))) continue;
      const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'packages', name, 'package.json'), 'utf8'));
      for (const entry of (manifest.files ?? []) as string[]) {
        const path = join('packages', name, entry);
        expect(existsSync(join(scratch, path)), `${path} (in ${name}'s files) is not in the image`).toBe(
          true,
        );
      }
    }
    for (const tool of ['typescript', 'vitest', 'vite', 'tsx', '@biomejs/biome']) {
      expect(existsSync(join(scratch, 'node_modules', tool)), tool).toBe(false);
    }
  });

  it('starts with the CMD, answers /readyz 200 on SQLite under its data directory, and exits 0 on SIGTERM', async () => {
    mkdirSync(join(scratch, 'data'));
    const [command, ...args] = START_COMMAND.split(' ');
    expect(command).toBe('node');
    // The image's environment, with its /data in the scratch directory and a free loopback port.
    const env = {
      ...cliEnv({ TOLLGATE_DRAIN_DELAY_MS: '0' }),
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: join(scratch, 'data', 'tollgate.db'),
      NODE_ENV: 'production',
    };
    server = new CliProcess(args, env, (argv, childEnv) =>
      spawn(process.execPath, argv, { cwd: scratch, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    const [, url] = await server.waitFor(/Tollgate listening on (http:\/\/[0-9.]+:\d+)/, 'stderr');
    expect((await call(url!, '/readyz')).status).toBe(200);
    expect(existsSync(join(scratch, 'data', 'tollgate.db'))).toBe(true);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
