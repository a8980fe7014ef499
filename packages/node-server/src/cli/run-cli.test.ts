import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { hashApiKey } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../open-storage.js';
import { runCli } from './run-cli.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** Runs the CLI in-process against a fresh, empty SQLite file in a temp directory (unless argv has --db). */
function cliHarness(env: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-cli-'));
  const db = join(cwd, 'test.db');
  // An empty database that exists, as `tollgate serve` leaves it (other commands never create one),
  // made before the first run that is not a help (help never touches the database).
  let created: Promise<void> | undefined;
  const run = async (...argv: string[]) => {
    const help = argv.some((arg) => arg === '--help' || arg === '-h' || arg === 'help');
    if (!help) {
      created ??= openStorage(db, cwd).then((storage) => storage.close());
      await created;
    }
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv.includes('--db') ? argv : [...argv, '--db', db], {
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

  describe('--help on every command prints its own usage, one line per option', () => {
    const common = ['--db URL_OR_PATH', '--config FILE', '-h, --help'];
    const commands: [string, string[]][] = [
      [
        'serve',
        [
          '--port N',
          '--host ADDR',
          '--workers N',
          '--drain-delay-ms MS',
          '--grace-ms MS',
          '--drain-timeout-ms MS',
          '--db-timeout-ms MS',
        ],
      ],
      [
        'account create',
        [
          '--name NAME',
          '--credit-usd AMOUNT',
          '--monthly-limit-usd AMOUNT',
          '--default-rpm N',
          '--create',
          '--json',
        ],
      ],
      ['account list', ['--json']],
      ['account show', ['--json']],
      ['account suspend', ['--json']],
      ['account unsuspend', ['--json']],
      ['credits add', ['--account ID', '--usd AMOUNT', '--json']],
      [
        'key create',
        [
          '--account ID',
          '--name NAME',
          '--scope SCOPE',
          '--env ENV',
          '--project ID',
          '--spend-limit-usd AMOUNT',
          '--limit-reset WINDOW',
          '--rate-limit-rpm N',
          '--json',
        ],
      ],
      ['key list', ['--account ID', '--json']],
      ['key disable', ['--json']],
      ['key enable', ['--json']],
      ['key revoke', ['--json']],
      ['project create', ['--account ID', '--name NAME', '--json']],
    ];
    it.each(commands)('%s', async (name, options) => {
      const cli = cliHarness();
      for (const flag of ['--help', '-h']) {
        const result = await cli.run(...name.split(' '), flag);
        expect(result).toMatchObject({ code: 0, stderr: '' });
        expect(result.stdout).toMatch(new RegExp(`^Usage: tollgate ${name} `));
        const optionLines = result.stdout.split('\n').filter((line) => /^ {2}-/.test(line));
        expect(optionLines.map((line) => line.trim().split(/\s{2,}/)[0])).toEqual([...options, ...common]);
        for (const line of optionLines) expect(line.trim().split(/\s{2,}/)[1]?.length).toBeGreaterThan(5);
        // Help never touches the database.
        expect(existsSync(cli.db)).toBe(false);
      }
      // `tollgate help <command>` prints the same text.
      expect((await cli.run('help', ...name.split(' '))).stdout).toBe(
        (await cli.run(...name.split(' '), '-h')).stdout,
      );
    });

    it('a group lists its subcommands: tollgate account --help, tollgate help key', async () => {
      const cli = cliHarness();
      const account = await cli.run('account', '--help');
      expect(account).toMatchObject({ code: 0, stderr: '' });
      for (const sub of ['create', 'list', 'show', 'suspend', 'unsuspend']) {
        expect(account.stdout).toContain(`  account ${sub} `);
      }
      const key = await cli.run('help', 'key');
      for (const sub of ['create', 'list', 'disable', 'enable', 'revoke']) {
        expect(key.stdout).toContain(`  key ${sub} `);
      }
      expect(key.stdout).not.toContain('account create');
    });

    it('a group without its subcommand exits 2 with the group usage on stderr', async () => {
      const result = await cliHarness().run('key');
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toMatch(/^tollgate: missing key subcommand\n\nUsage: tollgate key <subcommand>/);
    });

    it('tollgate --help lists every command, and help of an unknown command exits 2', async () => {
      const cli = cliHarness();
      const top = await cli.run('--help');
      expect(top.code).toBe(0);
      for (const [name] of commands) expect(top.stdout).toContain(`  ${name} `);
      expect(top.stdout).toContain('-v, --version');
      expect(await cli.run('help', 'frobnicate')).toMatchObject({ code: 2, stdout: '' });
    });
  });

  it('--version and -v print the version of @tollgate/node-server from its package.json', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    const cli = cliHarness();
    expect(await cli.run('--version')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await cli.run('-v')).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(await cli.json('--version')).toEqual({ version });
  });

  describe('account list, account show, key list', () => {
    it('account list --json prints every account, oldest first, with its balance; [] when none', async () => {
      const cli = cliHarness();
      expect(await cli.json('account', 'list')).toEqual({ data: [] });
      const a = (await cli.json('account', 'create', '--name', 'Acme', '--credit-usd', '10')).id;
      await new Promise((resolve) => setTimeout(resolve, 3));
      const b = (await cli.json('account', 'create', '--name', 'Bob', '--monthly-limit-usd', '5')).id;
      await cli.json('account', 'suspend', b as string);
      expect(await cli.json('account', 'list')).toEqual({
        data: [
          expect.objectContaining({ id: a, name: 'Acme', suspended: false, balance_micros: 9_500_000 }),
          expect.objectContaining({ id: b, name: 'Bob', suspended: true, balance_micros: 0 }),
        ],
      });
      const [first] = (await cli.json('account', 'list')).data as Record<string, unknown>[];
      expect(first).toMatchObject({ balance_usd: '9.500000', monthly_limit_micros: null, default_rpm: null });
    });

    it('account list prints a table without --json, and says so when there is none', async () => {
      const cli = cliHarness();
      expect(await cli.run('account', 'list')).toEqual({ code: 0, stdout: 'No accounts\n', stderr: '' });
      const { id } = await cli.json('account', 'create', '--name', 'Acme', '--credit-usd', '1.5');
      const { stdout } = await cli.run('account', 'list');
      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^ID\s+NAME\s+STATUS\s+BALANCE$/);
      expect(lines[1]).toMatch(new RegExp(`^${id}\\s+Acme\\s+active\\s+\\$1\\.425000$`));
    });

    it('account show --json: balance, month-to-date spend, limit, default rpm, suspended, key count', async () => {
      const cli = cliHarness();
      const id = (
        await cli.json(
          'account',
          'create',
          '--name',
          'Acme',
          '--credit-usd',
          '10',
          '--monthly-limit-usd',
          '50',
          '--default-rpm',
          '30',
        )
      ).id as string;
      await cli.json('key', 'create', '--account', id, '--name', 'a');
      const b = await cli.json('key', 'create', '--account', id, '--name', 'b');
      await cli.withDb(async (storage) => {
        await storage.updateApiKey(id, b.id as string, { disabled: true });
        await storage.appendLedgerEntries(id, [
          { kind: 'charge', amountMicros: -1_250_000, description: 'test charge', requestId: 'req_cli_show' },
        ]);
      });
      const { data } = await cli.json('account', 'show', id);
      expect(data).toEqual({
        id,
        name: 'Acme',
        suspended: false,
        balance_micros: 8_250_000,
        balance_usd: '8.250000',
        monthly_limit_micros: 50_000_000,
        monthly_limit_usd: '50.000000',
        default_rpm: 30,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        month_to_date: {
          month: new Date().toISOString().slice(0, 7),
          spent_micros: 1_250_000,
          spent_usd: '1.250000',
        },
        key_count: 2,
        disabled_key_count: 1,
      });

      const human = await cli.run('account', 'show', id);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain(`Account ${id} ("Acme")`);
      expect(human.stdout).toMatch(/balance\s+\$8\.250000/);
      expect(human.stdout).toMatch(/month to date\s+\$1\.250000 of \$50\.000000/);
      expect(human.stdout).toMatch(/keys\s+2 \(1 disabled\)/);
    });

    it('key list --json shows each key with its spend against its cap, never the secret or the hash', async () => {
      const cli = cliHarness();
      const id = (await cli.json('account', 'create', '--name', 'Acme')).id as string;
      const capped = await cli.json(
        'key',
        'create',
        '--account',
        id,
        '--name',
        'capped',
        '--spend-limit-usd',
        '2.5',
        '--rate-limit-rpm',
        '10',
      );
      const admin = await cli.json(
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
      );
      const other = (await cli.json('account', 'create', '--name', 'Other')).id as string;
      await cli.json('key', 'create', '--account', other, '--name', 'not mine');
      await cli.withDb((storage) => storage.updateApiKey(id, admin.id as string, { disabled: true }));

      const result = await cli.run('key', 'list', '--account', id, '--json');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      for (const secret of [capped.key, admin.key]) expect(result.stdout).not.toContain(secret as string);
      expect(result.stdout).not.toMatch(/hash/i);
      expect(JSON.parse(result.stdout)).toEqual({
        data: [
          {
            id: capped.id,
            name: 'capped',
            prefix: capped.prefix,
            scope: 'inference',
            env: 'live',
            project_id: null,
            disabled: false,
            revoked: false,
            expires_at: null,
            oauth_client_id: null,
            state: 'enabled',
            spent_micros: 0,
            spent_usd: '0.000000',
            spend_limit_micros: 2_500_000,
            spend_limit_usd: '2.500000',
            limit_reset: null,
            limit_remaining: '2.500000',
            usage_daily: '0.000000',
            usage_weekly: '0.000000',
            usage_monthly: '0.000000',
            limit_resets_at: null,
            rate_limit_rpm: 10,
            created_at: expect.any(String),
          },
          expect.objectContaining({
            id: admin.id,
            scope: 'provisioning',
            env: 'test',
            disabled: true,
            state: 'disabled',
          }),
        ],
      });

      const human = await cli.run('key', 'list', '--account', id);
      expect(human.code).toBe(0);
      const lines = human.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^ID\s+PREFIX\s+NAME\s+SCOPE\s+ENV\s+STATUS\s+SPENT \/ CAP\s+RATE LIMIT$/);
      expect(lines[1]).toContain('$0.000000 / $2.500000');
      expect(lines[1]).toContain('10 rpm');
      expect(lines[2]).toMatch(/disabled\s+\$0\.000000 \/ no cap\s+600 rpm \(config default\)$/);
      for (const secret of [capped.key, admin.key]) expect(human.stdout).not.toContain(secret as string);
    });

    it('key create --limit-reset caps a UTC window; key list shows the window and when it resets', async () => {
      const cli = cliHarness();
      const id = (await cli.json('account', 'create', '--name', 'Acme')).id as string;
      const args = ['key', 'create', '--account', id, '--name', 'daily', '--spend-limit-usd', '5'];
      const daily = await cli.json(...args, '--limit-reset', 'daily');
      expect(Object.keys(daily).sort()).toEqual(['id', 'key', 'prefix']);
      const bad = await cli.run(...args, '--limit-reset', 'hourly');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--limit-reset must be one of daily, weekly, monthly');

      const listed = JSON.parse((await cli.run('key', 'list', '--account', id, '--json')).stdout);
      const tomorrow = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
      expect(listed.data[0]).toMatchObject({
        id: daily.id,
        limit_reset: 'daily',
        limit_remaining: '5.000000',
        usage_daily: '0.000000',
        limit_resets_at: tomorrow,
      });
      const human = await cli.run('key', 'list', '--account', id);
      expect(human.stdout).toContain(`$0.000000 / $5.000000 daily (resets ${tomorrow})`);
    });

    it('key list of an account without keys says so; of an unknown account exits 1', async () => {
      const cli = cliHarness();
      const id = (await cli.json('account', 'create', '--name', 'Acme')).id as string;
      expect(await cli.run('key', 'list', '--account', id)).toEqual({
        code: 0,
        stdout: `No keys for ${id}\n`,
        stderr: '',
      });
      expect(await cli.json('key', 'list', '--account', id)).toEqual({ data: [] });
      const unknown = await cli.run('key', 'list', '--account', 'acct_nope', '--json');
      expect(unknown).toEqual({ code: 1, stdout: '', stderr: 'tollgate: no account with id "acct_nope"\n' });
      expect(await cli.run('account', 'show', 'acct_nope', '--json')).toMatchObject({ code: 1, stdout: '' });
    });
  });

  describe('a value that starts with "-" is checked as a value, naming the option', () => {
    const cases: [string[], string][] = [
      [
        ['credits', 'add', '--account', 'acct_x', '--usd', '-5'],
        'credits add: --usd must be a positive amount in USD, got "-5"',
      ],
      [
        ['credits', 'add', '--account', 'acct_x', '--usd=-5'],
        'credits add: --usd must be a positive amount in USD, got "-5"',
      ],
      [
        ['account', 'create', '--name', 'x', '--credit-usd', '-0.5'],
        'account create: --credit-usd must be a positive amount in USD, got "-0.5"',
      ],
      [
        ['account', 'create', '--name', 'x', '--monthly-limit-usd', '-1'],
        'account create: --monthly-limit-usd must be an amount in USD (0 or more), got "-1"',
      ],
      [
        ['account', 'create', '--name', 'x', '--default-rpm', '-3'],
        'account create: --default-rpm must be an integer from 1 to 1000000, got "-3"',
      ],
      [
        ['credits', 'add', '--account', 'acct_x', '--usd', '1.0000001'],
        'credits add: --usd must be a positive amount in USD with at most 6 decimals, got "1.0000001"',
      ],
      [['account', 'create', '--name', '--json'], 'account create: --name needs a value'],
      [['key', 'list', '--account', '--json'], 'key list: --account needs a value'],
    ];
    it.each(cases)('%j', async (argv, message) => {
      const result = await cliHarness().run(...argv);
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(result.stderr).toBe(`tollgate ${message} (see tollgate ${argv.slice(0, 2).join(' ')} --help)\n`);
    });
  });

  describe('key disable, enable and revoke', () => {
    async function accountWithKey(cli: ReturnType<typeof cliHarness>) {
      const account = (await cli.json('account', 'create', '--name', 'Acme')).id as string;
      const key = await cli.json('key', 'create', '--account', account, '--name', 'ci');
      return { account, id: key.id as string, secret: key.key as string };
    }
    const storedKey = (cli: ReturnType<typeof cliHarness>, secret: string) =>
      cli.withDb(async (storage) => (await storage.findApiKeyByHash(await hashApiKey(secret)))?.key);

    it('disable pauses a key and enable resumes it, each printing one object with the state', async () => {
      const cli = cliHarness();
      const { id, secret } = await accountWithKey(cli);

      expect(await cli.json('key', 'disable', id)).toMatchObject({ id, state: 'disabled', disabled: true });
      expect(await storedKey(cli, secret)).toMatchObject({ disabled: true, revoked: false });
      expect(await cli.json('key', 'enable', id)).toMatchObject({ id, state: 'enabled', disabled: false });
      expect(await storedKey(cli, secret)).toMatchObject({ disabled: false, revoked: false });
      expect(await cli.run('key', 'disable', id)).toEqual({
        code: 0,
        stdout: `Key ${id} is disabled\n`,
        stderr: '',
      });
    });

    it('revoke is for good: enable then exits 1 and the key stays revoked; key list shows each state', async () => {
      const cli = cliHarness();
      const { account, id, secret } = await accountWithKey(cli);
      const paused = (await cli.json('key', 'create', '--account', account, '--name', 'paused')).id as string;
      await cli.json('key', 'disable', paused);

      expect(await cli.json('key', 'revoke', id)).toMatchObject({
        id,
        state: 'revoked',
        revoked: true,
        disabled: true,
      });
      const enable = await cli.run('key', 'enable', id);
      expect(enable).toMatchObject({ code: 1, stdout: '' });
      expect(enable.stderr).toBe(
        `tollgate: key "${id}" was revoked: a revoked key cannot be enabled (create a new key)\n`,
      );
      expect(await cli.json('key', 'disable', id)).toMatchObject({ state: 'revoked' });
      expect(await cli.json('key', 'revoke', id)).toMatchObject({ state: 'revoked' });
      expect(await storedKey(cli, secret)).toMatchObject({ disabled: true, revoked: true });

      const listed = (await cli.json('key', 'list', '--account', account)).data as { state: string }[];
      expect(listed.map((key) => key.state)).toEqual(['revoked', 'disabled']);
      const table = (await cli.run('key', 'list', '--account', account)).stdout.trimEnd().split('\n');
      expect(table[1]).toMatch(new RegExp(`^${id}\\s.*\\srevoked\\s`));
      expect(table[2]).toMatch(/\sdisabled\s/);
    });

    it('an unknown key id exits 1 naming it; a missing ID exits 2', async () => {
      const cli = cliHarness();
      for (const action of ['disable', 'enable', 'revoke']) {
        expect(await cli.run('key', action, 'key_nope')).toEqual({
          code: 1,
          stdout: '',
          stderr: 'tollgate: no key with id "key_nope"\n',
        });
        expect((await cli.run('key', action)).code).toBe(2);
      }
    });
  });

  describe('a SQLite file that does not exist is refused, not created, except by serve and account create --create', () => {
    const commands = [
      ['account', 'list'],
      ['account', 'show', 'acct_x'],
      ['account', 'suspend', 'acct_x'],
      ['account', 'create', '--name', 'typo'],
      ['credits', 'add', '--account', 'acct_x', '--usd', '1'],
      ['ledger', '--account', 'acct_x'],
      ['key', 'create', '--account', 'acct_x', '--name', 'k'],
      ['key', 'list', '--account', 'acct_x'],
      ['key', 'revoke', 'key_x'],
      ['project', 'create', '--account', 'acct_x', '--name', 'p'],
    ];
    it.each(commands.map((argv) => [argv.slice(0, 2).join(' '), argv] as const))(
      '%s exits 1 naming the file, which stays absent',
      async (_, argv) => {
        const cli = cliHarness();
        const missing = join(cli.cwd, 'tollgate-typo.db');
        const result = await cli.run(...argv, '--db', missing);
        expect(result).toEqual({
          code: 1,
          stdout: '',
          stderr: `tollgate: cannot open the SQLite database ${missing}: the file does not exist (tollgate serve creates it, and so does tollgate account create --create)\n`,
        });
        expect(existsSync(missing)).toBe(false);
      },
    );

    it('DATABASE_URL naming a missing file is refused alike', async () => {
      const cli = cliHarness({ DATABASE_URL: 'elsewhere.db' });
      const result = await cli.run('account', 'list', '--db', join(cli.cwd, 'elsewhere.db'));
      expect(result.code).toBe(1);
      const viaEnv = await runCli(['account', 'list'], {
        stdout: { write: () => true },
        stderr: { write: () => true },
        env: { DATABASE_URL: 'elsewhere.db' },
        cwd: cli.cwd,
      });
      expect(viaEnv).toBe(1);
      expect(existsSync(join(cli.cwd, 'elsewhere.db'))).toBe(false);
    });

    it('account create --create makes the database, then the account', async () => {
      const cli = cliHarness();
      const fresh = join(cli.cwd, 'fresh.db');
      const result = await cli.run(
        'account',
        'create',
        '--name',
        'First',
        '--create',
        '--json',
        '--db',
        fresh,
      );
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const { id } = JSON.parse(result.stdout) as { id: string };
      const listed = await cli.run('account', 'list', '--json', '--db', fresh);
      expect(JSON.parse(listed.stdout).data.map((a: { id: string }) => a.id)).toEqual([id]);
    });
  });

  describe('a SQLite path that cannot be opened is named in the error', () => {
    it('a missing directory', async () => {
      const cli = cliHarness();
      const db = join(cli.cwd, 'no-such-dir', 'tollgate.db');
      const result = await cli.run('account', 'list', '--db', db);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toBe(
        `tollgate: cannot open the SQLite database ${db}: the directory ${join(cli.cwd, 'no-such-dir')} does not exist\n`,
      );
    });

    it('a parent that is a file, given relative to the working directory', async () => {
      const cli = cliHarness();
      writeFileSync(join(cli.cwd, 'plain-file'), '');
      const result = await cli.run('account', 'create', '--name', 'x', '--db', 'plain-file/tollgate.db');
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toContain(
        `cannot open the SQLite database ${join(cli.cwd, 'plain-file', 'tollgate.db')}`,
      );
      expect(result.stderr).toContain(`${join(cli.cwd, 'plain-file')} is not a directory`);
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
        '--create',
        '--db',
        join(cli.cwd, 'new.db'),
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
      {
        cwd: REPO_ROOT,
        env: { ...process.env, DATABASE_URL: '', TOLLGATE_CONFIG: '', TOLLGATE_DRAIN_DELAY_MS: '0' },
        stdio: 'pipe',
      },
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
