import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-serve-secret-'));
  dirs.push(dir);
  return dir;
}

/** `tollgate serve` in-process until it listens, then stopped; or its failure when it exits first. */
async function serveOnce(db: string, env: Record<string, string> = {}) {
  let stdout = '';
  let stderr = '';
  let stop: (reason: string) => void = () => {};
  let listening!: () => void;
  const up = new Promise<'up'>((resolve) => {
    listening = () => resolve('up');
  });
  const code = runCli(['serve', '--port', '0', '--db', db], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: {
      write: (text: string) => {
        stderr += text;
        if (text.includes('Tollgate listening')) listening();
      },
    },
    env: { LOG_LEVEL: 'info', TOLLGATE_DRAIN_DELAY_MS: '0', ...env },
    cwd: tempDir(),
    waitForShutdown: () => new Promise((resolve) => (stop = resolve)),
  });
  const outcome = await Promise.race([up, code]);
  if (outcome === 'up') stop('test');
  return { code: await code, listened: outcome === 'up', stdout, stderr };
}

describe('tollgate serve and the server secret', () => {
  it('on SQLite creates <db>.secret (0600) once, logs its path but never the secret, and reuses it', async () => {
    const dir = tempDir();
    const db = join(dir, 'tollgate.db');
    const first = await serveOnce(db);
    expect(first).toMatchObject({ code: 0, listened: true });
    const path = `${db}.secret`;
    const secret = readFileSync(path, 'utf8').trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    if (process.platform !== 'win32') expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(first.stderr).toContain(`server secret: created ${path}`);
    expect(first.stderr + first.stdout).not.toContain(secret);

    const second = await serveOnce(db);
    expect(second).toMatchObject({ code: 0, listened: true });
    expect(second.stderr).toContain(`server secret: using ${path}`);
    expect(second.stderr + second.stdout).not.toContain(secret);
    expect(readFileSync(path, 'utf8').trim()).toBe(secret);
  });

  it('with TOLLGATE_SECRET uses it and writes no file', async () => {
    const dir = tempDir();
    const db = join(dir, 'tollgate.db');
    const value = 'a-server-secret-from-the-environment-0123456789';
    const result = await serveOnce(db, { TOLLGATE_SECRET: value });
    expect(result).toMatchObject({ code: 0, listened: true });
    expect(result.stderr).toContain('server secret: from TOLLGATE_SECRET');
    expect(result.stderr + result.stdout).not.toContain(value);
    expect(existsSync(`${db}.secret`)).toBe(false);
  });

  it('on Postgres without TOLLGATE_SECRET refuses to start, before it connects, and says what to set', async () => {
    // Nothing listens on port 1: a start that got as far as connecting would fail differently.
    const result = await serveOnce('postgres://tollgate@127.0.0.1:1/tollgate');
    expect(result.listened).toBe(false);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/tollgate: TOLLGATE_SECRET is not set\. A Postgres deployment needs it/);
    expect(result.stdout).toBe('');
  });

  it('a TOLLGATE_SECRET shorter than 32 characters is refused and nothing is created', async () => {
    const dir = tempDir();
    const result = await serveOnce(join(dir, 'tollgate.db'), { TOLLGATE_SECRET: 'too-short' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/TOLLGATE_SECRET is too short: it must be at least 32 characters/);
    expect(result.stderr).not.toContain('too-short');
    expect(readdirSync(dir)).toEqual([]);
  });
});
