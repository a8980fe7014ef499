import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import {
  loadServerSecret,
  readOrCreateSecretFile,
  SERVER_SECRET_ENV,
  ServerSecretError,
  secretFilePath,
} from './server-secret.js';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const posix = process.platform !== 'win32';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDb(): { dir: string; db: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-secret-'));
  dirs.push(dir);
  return { dir, db: join(dir, 'tollgate.db') };
}

const sqlite = (location: string) => ({ kind: 'sqlite' as const, location });
const postgres = { kind: 'postgres' as const, location: 'postgres://u:p@127.0.0.1:5432/db' };

describe('server secret', () => {
  it('SQLite: creates <db>.secret with mode 0600 and 32 random bytes as hex, and says so', async () => {
    const { dir, db } = tempDb();
    const loaded = await loadServerSecret({ env: {}, target: sqlite(db) });
    expect(loaded).toMatchObject({ source: 'file', path: join(dir, 'tollgate.db.secret'), created: true });
    expect(loaded.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(secretFilePath(db), 'utf8')).toBe(`${loaded.secret}\n`);
    if (posix) expect(statSync(secretFilePath(db)).mode & 0o777).toBe(0o600);
    // No temporary file is left behind.
    expect(readdirSync(dir)).toEqual(['tollgate.db.secret']);
  });

  it('SQLite: reuses the file on the next call (and the next start)', async () => {
    const { db } = tempDb();
    const first = await loadServerSecret({ env: {}, target: sqlite(db) });
    const second = await loadServerSecret({ env: {}, target: sqlite(db) });
    expect(second).toEqual({ ...first, created: false });
  });

  it('concurrent creation in one process agrees on one secret, and exactly one caller created it', async () => {
    const { db } = tempDb();
    const path = secretFilePath(db);
    const results = await Promise.all(Array.from({ length: 8 }, () => readOrCreateSecretFile(path)));
    expect(new Set(results.map((r) => r.secret)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(readFileSync(path, 'utf8').trim()).toBe(results[0]!.secret);
  });

  it('processes starting together agree on one secret (the losers read the winner’s file)', async () => {
    const { db } = tempDb();
    const run = promisify(execFile);
    const script = [
      "import { createHash } from 'node:crypto';",
      "import { readOrCreateSecretFile } from './packages/node-server/src/server-secret.ts';",
      // Every child waits for the same moment, so the creations really race.
      'await new Promise((go) => setTimeout(go, Number(process.argv[2]) - Date.now()));',
      'const { secret, created } = await readOrCreateSecretFile(process.argv[1]);',
      "console.log(JSON.stringify({ digest: createHash('sha256').update(secret).digest('hex'), created }));",
    ].join('\n');
    const startAt = Date.now() + 3_000;
    const children = await Promise.all(
      [1, 2, 3].map(() =>
        run(
          process.execPath,
          ['--import', 'tsx', '--input-type=module', '-e', script, secretFilePath(db), String(startAt)],
          {
            cwd: REPO_ROOT,
            timeout: 30_000,
          },
        ),
      ),
    );
    const outputs = children.map(
      (child) => JSON.parse(child.stdout.trim()) as { digest: string; created: boolean },
    );
    expect(new Set(outputs.map((o) => o.digest)).size).toBe(1);
    expect(outputs.filter((o) => o.created)).toHaveLength(1);
  }, 60_000);

  it(`${SERVER_SECRET_ENV} wins: no file is created or read`, async () => {
    const { dir, db } = tempDb();
    const value = 'x'.repeat(40);
    expect(await loadServerSecret({ env: { [SERVER_SECRET_ENV]: value }, target: sqlite(db) })).toEqual({
      source: 'env',
      secret: value,
    });
    expect(readdirSync(dir)).toEqual([]);
    // Surrounding whitespace (a trailing newline from a file) is not part of it.
    expect(
      (await loadServerSecret({ env: { [SERVER_SECRET_ENV]: ` ${value}\n` }, target: postgres })).secret,
    ).toBe(value);
  });

  it(`a ${SERVER_SECRET_ENV} shorter than 32 characters is refused with a clear error that does not echo it`, async () => {
    const { db } = tempDb();
    const short = 'hunter2-hunter2-hunter2';
    const attempt = loadServerSecret({ env: { [SERVER_SECRET_ENV]: short }, target: sqlite(db) });
    await expect(attempt).rejects.toThrow(ServerSecretError);
    await expect(attempt).rejects.toThrow(/TOLLGATE_SECRET is too short: it must be at least 32 characters/);
    await expect(attempt).rejects.not.toThrow(short);
    expect(existsSync(secretFilePath(db))).toBe(false);
  });

  it(`Postgres without ${SERVER_SECRET_ENV} is refused, telling the operator to set it on every process`, async () => {
    await expect(loadServerSecret({ env: {}, target: postgres })).rejects.toThrow(
      /TOLLGATE_SECRET is not set\. A Postgres deployment needs it/,
    );
    await expect(loadServerSecret({ env: { [SERVER_SECRET_ENV]: '' }, target: postgres })).rejects.toThrow(
      ServerSecretError,
    );
  });

  it('an in-memory SQLite database gets a per-process secret and no file', async () => {
    const loaded = await loadServerSecret({ env: {}, target: sqlite(':memory:') });
    expect(loaded.source).toBe('memory');
    expect(loaded.secret).toMatch(/^[0-9a-f]{64}$/);
  });

  it('an existing file readable by others is used, with a warning', async () => {
    if (!posix) return;
    const { db } = tempDb();
    const path = secretFilePath(db);
    writeFileSync(path, `${'a'.repeat(64)}\n`);
    chmodSync(path, 0o644);
    const loaded = await readOrCreateSecretFile(path);
    expect(loaded.secret).toBe('a'.repeat(64));
    expect(loaded.warning).toMatch(/readable by other users; run: chmod 600/);
  });

  it('a secret file that is too short is refused rather than replaced', async () => {
    const { db } = tempDb();
    const path = secretFilePath(db);
    writeFileSync(path, 'short\n', { mode: 0o600 });
    await expect(readOrCreateSecretFile(path)).rejects.toThrow(/holds fewer than 32 characters/);
    expect(readFileSync(path, 'utf8')).toBe('short\n');
  }, 10_000);

  it('a database in a directory that does not exist is a clear error', async () => {
    const { dir } = tempDb();
    await expect(
      loadServerSecret({ env: {}, target: sqlite(join(dir, 'missing', 'tollgate.db')) }),
    ).rejects.toThrow(/cannot create the server secret file .*: the directory .* does not exist/);
  });
});
