import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../open-storage.js';
import { runCli } from './run-cli.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Runs the CLI in-process against a fresh SQLite file in a temp directory. */
function cliHarness(env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const db = join(cwd, 'test.db');
  const run = async (...argv: string[]) => {
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
  /** Runs a `--json` command that must succeed; returns its one JSON object. */
  const json = async (...argv: string[]) => {
    const result = await run(...argv, '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const withDb = async <T>(fn: (storage: Awaited<ReturnType<typeof openStorage>>) => Promise<T>) => {
    const storage = await openStorage(db, cwd);
    try {
      return await fn(storage);
    } finally {
      await storage.close();
    }
  };
  return { cwd, db, run, json, withDb };
}

describe('tollgate CLI', () => {
  it('every command with --json prints exactly one JSON object', async () => {
    const cli = cliHarness();
    const account = await cli.json('account', 'create', '--name', 'Acme');
    expect(account).toEqual({ id: expect.stringMatching(/^acct_/) });
    const id = account.id as string;

    expect(await cli.json('project', 'create', '--account', id, '--name', 'Web')).toEqual({
      id: expect.stringMatching(/^proj_/),
    });
    const key = await cli.json('key', 'create', '--account', id, '--name', 'ci');
    expect(key).toEqual({
      id: expect.stringMatching(/^key_/),
      key: expect.stringMatching(/^gw_live_/),
      prefix: expect.stringMatching(/^gw_live_/),
    });
    expect((key.key as string).startsWith(key.prefix as string)).toBe(true);
    expect(await cli.json('credits', 'add', '--account', id, '--usd', '1')).toMatchObject({ account_id: id });
    expect(await cli.json('account', 'suspend', id)).toEqual({ id, suspended: true });
    expect(await cli.json('account', 'unsuspend', id)).toEqual({ id, suspended: false });
  });

  it('without --json each command prints one short human line', async () => {
    const cli = cliHarness();
    const result = await cli.run('account', 'create', '--name', 'Acme');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Created account acct_\S+ \("Acme"\), balance \$0\.000000\n$/);
  });

  it('credits add --usd 10 at a 5 % fee raises the balance by 9.50 with two ledger lines', async () => {
    const cli = cliHarness();
    const { id } = (await cli.json('account', 'create', '--name', 'Acme')) as { id: string };
    const out = await cli.json('credits', 'add', '--account', id, '--usd', '10');
    expect(out).toMatchObject({ amount_micros: 10_000_000, fee_micros: 500_000, balance_micros: 9_500_000 });
    await cli.withDb(async (storage) => {
      expect((await storage.getAccount(id))?.balanceMicros).toBe(9_500_000);
      const ledger = await storage.listLedgerEntries(id);
      expect(ledger.map((e) => [e.kind, e.amountMicros])).toEqual([
        ['credit', 10_000_000],
        ['fee', -500_000],
      ]);
    });
  });

  it('account create --credit-usd is a top-up too, and the limits are stored', async () => {
    const cli = cliHarness();
    const args = [
      '--name',
      'Acme',
      '--credit-usd',
      '20',
      '--monthly-limit-usd',
      '100.5',
      '--default-rpm',
      '30',
    ];
    const { id } = (await cli.json('account', 'create', ...args)) as { id: string };
    await cli.withDb(async (storage) => {
      expect(await storage.getAccount(id)).toMatchObject({
        name: 'Acme',
        balanceMicros: 19_000_000,
        monthlyLimitMicros: 100_500_000,
        defaultRpm: 30,
      });
      expect((await storage.listLedgerEntries(id)).map((e) => e.kind)).toEqual(['credit', 'fee']);
    });
  });

  it('key create takes scope, env and limits; defaults to an inference key of env live', async () => {
    const cli = cliHarness();
    const { id } = (await cli.json('account', 'create', '--name', 'Acme')) as { id: string };
    const plain = await cli.json('key', 'create', '--account', id, '--name', 'plain');
    const test = await cli.json(
      'key',
      'create',
      '--account',
      id,
      '--name',
      'admin',
      '--scope',
      'provisioning',
      '--env',
      'test',
      '--spend-limit-usd',
      '2.5',
      '--rate-limit-rpm',
      '10',
    );
    expect(test.key).toMatch(/^gw_test_/);
    await cli.withDb(async (storage) => {
      expect(await storage.getApiKey(id, plain.id as string)).toMatchObject({
        scope: 'inference',
        env: 'live',
      });
      expect(await storage.getApiKey(id, test.id as string)).toMatchObject({
        scope: 'provisioning',
        env: 'test',
        spendLimitMicros: 2_500_000,
        rateLimitRpm: 10,
      });
    });
  });

  it('account suspend flips the flag', async () => {
    const cli = cliHarness();
    const { id } = (await cli.json('account', 'create', '--name', 'Acme')) as { id: string };
    await cli.json('account', 'suspend', id);
    await cli.withDb(async (storage) => expect((await storage.getAccount(id))?.suspended).toBe(true));
  });

  describe('refuses bad command lines with a message on stderr and nothing on stdout', () => {
    const cases: [string, string[], number][] = [
      ['an unknown option', ['account', 'create', '--name', 'x', '--bogus'], 2],
      ['a missing --name', ['account', 'create'], 2],
      ['an option without its value', ['account', 'create', '--name'], 2],
      ['a non-numeric amount', ['credits', 'add', '--account', 'acct_x', '--usd', 'abc'], 2],
      ['more than 6 decimals', ['credits', 'add', '--account', 'acct_x', '--usd', '1.0000001'], 2],
      ['a zero top-up', ['credits', 'add', '--account', 'acct_x', '--usd', '0'], 2],
      ['a negative top-up', ['credits', 'add', '--account', 'acct_x', '--usd=-5'], 2],
      ['a bad scope', ['key', 'create', '--account', 'acct_x', '--name', 'k', '--scope', 'admin'], 2],
      ['a bad rpm', ['account', 'create', '--name', 'x', '--default-rpm', '1.5'], 2],
      ['an unknown command', ['frobnicate'], 2],
      ['an unknown subcommand', ['account', 'delete', 'acct_x'], 2],
      ['a missing suspend id', ['account', 'suspend'], 2],
      ['an unknown account (credits)', ['credits', 'add', '--account', 'acct_nope', '--usd', '1'], 1],
      ['an unknown account (key)', ['key', 'create', '--account', 'acct_nope', '--name', 'k', '--json'], 1],
      ['an unknown account (project)', ['project', 'create', '--account', 'acct_nope', '--name', 'p'], 1],
      ['an unknown account (suspend)', ['account', 'suspend', 'acct_nope', '--json'], 1],
    ];
    it.each(cases)('%s', async (_, argv, expected) => {
      const result = await cliHarness().run(...argv);
      expect(result.code).toBe(expected);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^tollgate/);
    });
  });

  it('a top-up with an invalid config file fails before writing, naming the JSON path', async () => {
    const cli = cliHarness();
    writeFileSync(
      join(cli.cwd, 'tollgate.config.json'),
      JSON.stringify({ providers: {}, models: [], billing: 5 }),
    );
    const result = await cli.run('account', 'create', '--name', 'x', '--credit-usd', '5', '--json');
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain('$.billing');
    await cli.withDb(async (storage) => expect(await storage.countAccounts()).toBe(0));
  });

  it('the real entry point runs through tsx', async () => {
    const cli = cliHarness();
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--import',
        'tsx',
        'packages/node-server/src/cli.ts',
        'account',
        'create',
        '--name',
        'x',
        '--json',
        '--db',
        cli.db,
      ],
      { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: '' } },
    );
    expect(JSON.parse(stdout)).toEqual({ id: expect.stringMatching(/^acct_/) });
  });

  it('the real entry point exits 2 on an unknown command', async () => {
    const result = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'packages/node-server/src/cli.ts', 'frobnicate'],
      { cwd: REPO_ROOT },
    ).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toContain('unknown command "frobnicate"');
  });

  it('the real entry point serves, then drains and exits 0 on SIGTERM', async () => {
    const cli = cliHarness();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'packages/node-server/src/cli.ts', 'serve', '--port', '0', '--db', cli.db],
      { cwd: REPO_ROOT, env: { ...process.env, DATABASE_URL: '', TOLLGATE_CONFIG: '' }, stdio: 'pipe' },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = '';
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        const match = /"url":"([^"]+)"/.exec(stderr);
        if (match?.[1]) resolve(match[1]);
      });
      child.once('exit', () => reject(new Error(`serve exited early: ${stderr}`)));
    });
    const response = await fetch(`${url}/healthz`);
    expect(response.headers.get('x-gateway-request-id')).toMatch(/^req_/);
    child.kill('SIGTERM');
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
    expect(stdout).toContain('gw_live_');
  });
});
