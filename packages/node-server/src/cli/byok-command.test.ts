import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBodySealer, serverSecretBytes } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../open-storage.js';
import { runCli } from './run-cli.js';

/** Runs the CLI in-process against a fresh, empty SQLite file in a temp directory (the bundled example config). */
function cliHarness(env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-byok-cli-'));
  const db = join(cwd, 'test.db');
  // An empty database that exists, as `tollgate serve` leaves it (other commands never create one).
  const created = openStorage(db, cwd).then((storage) => storage.close());
  const run = async (...argv: string[]) => {
    await created;
    let stdout = '';
    let stderr = '';
    const code = await runCli([...argv, '--db', db], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env,
      cwd,
    });
    return { code, stdout, stderr };
  };
  const newAccount = async () => {
    const result = await run('account', 'create', '--name', 'Acme', '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return (JSON.parse(result.stdout) as { id: string }).id;
  };
  const byokKeys = async (accountId: string) => {
    const storage = await openStorage(db, cwd);
    try {
      return await storage.listByokKeys(accountId);
    } finally {
      await storage.close();
    }
  };
  return { cwd, db, run, newAccount, byokKeys };
}

const providerKey = () => `sk-proj-CLICANARY${crypto.randomUUID().replaceAll('-', '')}`;

const openSealed = (secret: string, accountId: string, id: string, sealed: string) =>
  createBodySealer(serverSecretBytes(secret), 'byok').open(accountId, id, sealed);

describe('tollgate byok add', () => {
  it('--json prints the view only; the key is sealed in the database under a 0600 secret file beside it', async () => {
    const cli = cliHarness();
    const accountId = await cli.newAccount();
    const apiKey = providerKey();
    const result = await cli.run(
      'byok',
      'add',
      '--account',
      accountId,
      '--provider',
      'openai',
      '--api-key',
      apiKey,
      '--label',
      'prod',
      '--allow-fallback',
      '--json',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const view = JSON.parse(result.stdout);
    expect(view).toEqual({
      id: expect.stringMatching(/^byok_[0-9a-z]{20}$/),
      provider: 'openai',
      label: 'prod',
      allow_fallback: true,
      created_at: expect.stringMatching(/Z$/),
    });
    expect(result.stdout + result.stderr).not.toContain('CLICANARY');

    const secretFile = `${cli.db}.secret`;
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
    expect(result.stderr).toContain(`created the server secret file ${secretFile}`);
    const secret = readFileSync(secretFile, 'utf8').trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);

    const [stored] = await cli.byokKeys(accountId);
    expect(stored).toMatchObject({ id: view.id, provider: 'openai', label: 'prod', allowFallback: true });
    expect(stored?.sealedKey).not.toContain(apiKey);
    expect(await openSealed(secret, accountId, view.id, stored!.sealedKey)).toBe(apiKey);
    const raw = Buffer.concat(
      [cli.db, `${cli.db}-wal`].filter((p) => existsSync(p)).map((p) => readFileSync(p)),
    );
    expect(raw.includes(apiKey)).toBe(false);
  });

  it('a second add reuses the secret file silently; without --json it prints one human line', async () => {
    const cli = cliHarness();
    const accountId = await cli.newAccount();
    const args = ['byok', 'add', '--account', accountId, '--api-key', providerKey()];
    const first = await cli.run(...args, '--provider', 'openai', '--json');
    expect(first.code).toBe(0);
    const secret = readFileSync(`${cli.db}.secret`, 'utf8').trim();
    const apiKey = providerKey();
    const second = await cli.run(
      'byok',
      'add',
      '--account',
      accountId,
      '--provider',
      'anthropic',
      '--api-key',
      apiKey,
    );
    expect(second).toMatchObject({ code: 0, stderr: '' });
    expect(second.stdout).toMatch(/^Added BYOK key byok_\S+ for provider anthropic to acct_\S+\n$/);
    expect(second.stdout).not.toContain('CLICANARY');
    expect(readFileSync(`${cli.db}.secret`, 'utf8').trim()).toBe(secret);
    const stored = await cli.byokKeys(accountId);
    expect(stored.map((k) => [k.provider, k.label, k.allowFallback])).toEqual([
      ['openai', null, false],
      ['anthropic', null, false],
    ]);
    expect(await openSealed(secret, accountId, stored[1]!.id, stored[1]!.sealedKey)).toBe(apiKey);
  });

  it('with TOLLGATE_SECRET it seals under that secret and creates no file', async () => {
    const envSecret = 'cli-test-secret-0123456789abcdef-0123456789';
    const cli = cliHarness({ TOLLGATE_SECRET: envSecret });
    const accountId = await cli.newAccount();
    const apiKey = providerKey();
    const result = await cli.run(
      'byok',
      'add',
      '--account',
      accountId,
      '--provider',
      'openai',
      '--api-key',
      apiKey,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(`${cli.db}.secret`)).toBe(false);
    const [stored] = await cli.byokKeys(accountId);
    expect(await openSealed(envSecret, accountId, stored!.id, stored!.sealedKey)).toBe(apiKey);
  });

  it.each([
    ['a provider not in the config', 'mistral', /--provider: no provider "mistral"/],
    ['the keyless demo provider', 'demo', /--provider: "demo" is the keyless demo provider/],
  ])('refuses %s (exit 1), storing nothing and creating no secret file', async (_, provider, message) => {
    const cli = cliHarness();
    const accountId = await cli.newAccount();
    const result = await cli.run(
      'byok',
      'add',
      '--account',
      accountId,
      '--provider',
      provider,
      '--api-key',
      providerKey(),
      '--json',
    );
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toMatch(message);
    expect(result.stderr).not.toContain('CLICANARY');
    expect(await cli.byokKeys(accountId)).toEqual([]);
    expect(existsSync(`${cli.db}.secret`)).toBe(false);
  });

  it('takes its providers from --config', async () => {
    const cli = cliHarness();
    const config = join(cli.cwd, 'custom.json');
    writeFileSync(
      config,
      JSON.stringify({
        providers: { mine: { format: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'x' } },
        models: [],
      }),
    );
    const accountId = await cli.newAccount();
    const args = ['byok', 'add', '--account', accountId, '--api-key', providerKey(), '--config', config];
    expect((await cli.run(...args, '--provider', 'mine')).code).toBe(0);
    const refused = await cli.run(...args, '--provider', 'openai');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('can be added for mine');
  });

  it('an unknown account → exit 1 naming it', async () => {
    const cli = cliHarness();
    const result = await cli.run(
      'byok',
      'add',
      '--account',
      'acct_nope',
      '--provider',
      'openai',
      '--api-key',
      providerKey(),
    );
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('no account with id "acct_nope"');
  });

  it.each([
    [['--provider', 'openai'], 'missing --api-key'],
    [['--api-key', 'sk-x'], 'missing --provider'],
    [['--provider', 'openai', '--api-key', 'sk-CLICANARY has spaces'], '--api-key must be printable ASCII'],
    [
      ['--provider', 'openai', '--api-key', 'sk-x', '--label', 'l'.repeat(101)],
      '--label must be at most 100',
    ],
  ])('a malformed command line %j → exit 2: %s', async (args, message) => {
    const cli = cliHarness();
    const result = await cli.run('byok', 'add', '--account', 'acct_x', ...args);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain(message);
    expect(result.stderr).not.toContain('CLICANARY');
  });

  it('--help lists its options', async () => {
    const result = await cliHarness().run('byok', 'add', '--help');
    expect(result.code).toBe(0);
    const flags = result.stdout
      .split('\n')
      .filter((line) => /^ {2}-/.test(line))
      .map((line) => line.trim().split(/\s{2,}/)[0]);
    expect(flags).toEqual([
      '--account ID',
      '--provider P',
      '--api-key K',
      '--label L',
      '--allow-fallback',
      '--json',
      '--db URL_OR_PATH',
      '--config FILE',
      '-h, --help',
    ]);
  });
});
