import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from './helpers/cli-process.js';
import { call, expectError } from './helpers/http.js';
import { openSqlite } from './helpers/storage-variants.js';
import { startTestGateway, type TestGateway } from './helpers/test-gateway.js';

/** A config with the 5 % top-up fee of product.md. */
const CLI_CONFIG = {
  providers: { keyed: { format: 'openai', base_url: 'http://127.0.0.1:9/v1', api_key: 'sk-upstream-test' } },
  models: [
    {
      id: 'acme/fast',
      max_output_tokens: 1000,
      endpoints: [{ provider: 'keyed', upstream_model: 'fast-1', pricing: { prompt: '1', completion: '2' } }],
    },
  ],
  billing: { top_up_fee_percent: '5' },
};

let dir: string;
let dbPath: string;
let configPath: string;
let gw: TestGateway;

/** `tollgate <args> --db <temp file> --config <temp config>`. */
const tollgate = (...args: string[]) => runCli([...args, '--db', dbPath, '--config', configPath]);

/** The one JSON object a `--json` command printed: stdout is exactly one line holding it. */
function jsonResult(result: CliResult): Record<string, unknown> {
  expect(result.code, `exit code; stderr: ${result.stderr}`).toBe(0);
  const lines = result.stdout.split('\n').filter((line) => line.trim() !== '');
  expect(lines, `stdout: ${result.stdout}`).toHaveLength(1);
  const parsed = JSON.parse(lines[0]!);
  expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true);
  return parsed;
}

async function createAccount(...extra: string[]): Promise<string> {
  const result = jsonResult(
    await tollgate('account', 'create', '--name', 'cli customer', ...extra, '--json'),
  );
  expect(result).toMatchObject({ id: expect.stringMatching(/^acct_[0-9a-z]+$/) });
  return result.id as string;
}

async function createKey(accountId: string, ...extra: string[]) {
  const result = jsonResult(
    await tollgate('key', 'create', '--account', accountId, '--name', 'cli key', ...extra, '--json'),
  );
  return result as { id: string; key: string; prefix: string };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tollgate-cli-e2e-'));
  dbPath = join(dir, 'tollgate.db');
  configPath = join(dir, 'tollgate.config.json');
  writeFileSync(configPath, JSON.stringify(CLI_CONFIG));
  // The server holds the file open for the whole suite: every CLI run writes next to it.
  gw = await startTestGateway(undefined, { opened: await openSqlite(dbPath) });
});

afterAll(async () => {
  await gw?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('tollgate CLI against a SQLite file a running server also uses', () => {
  it('account create --credit-usd 10 --json prints exactly one JSON object {id}; the 5 % fee leaves 9.50', async () => {
    const id = await createAccount('--credit-usd', '10');
    const account = await gw.storage.getAccount(id);
    expect(account).toMatchObject({ id, name: 'cli customer', suspended: false, balanceMicros: 9_500_000 });
    const ledger = await gw.storage.listLedgerEntries(id);
    expect(ledger.map((entry) => [entry.kind, entry.amountMicros])).toEqual([
      ['credit', 10_000_000],
      ['fee', -500_000],
    ]);
  });

  it('credits add --usd 10 --json raises the balance by 9.50, seen over HTTP by a key from key create --json', async () => {
    const id = await createAccount('--credit-usd', '10');
    const key = await createKey(id);
    expect(key.key).toMatch(/^gw_live_[A-Za-z0-9_-]{32}$/);
    const before = await call(gw.url, '/v1/key', { key: key.key });
    expect(before.status).toBe(200);
    expect(before.body.data.balance_micros).toBe(9_500_000);

    jsonResult(await tollgate('credits', 'add', '--account', id, '--usd', '10', '--json'));
    const after = await call(gw.url, '/v1/key', { key: key.key });
    expect(after.body.data.balance_micros - before.body.data.balance_micros).toBe(9_500_000);
    expect(after.body.data.balance_usd).toBe(19);
  });

  it('key create --scope provisioning --json → {id, key, prefix}; the key manages keys over HTTP', async () => {
    const id = await createAccount();
    const key = await createKey(id, '--scope', 'provisioning');
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_[0-9a-z]+$/),
      key: expect.stringMatching(/^gw_live_[A-Za-z0-9_-]{32}$/),
      prefix: expect.any(String),
    });
    expect(key.key.startsWith(key.prefix)).toBe(true);
    expect(key.prefix.length).toBeLessThan(key.key.length);

    const list = await call(gw.url, '/v1/keys', { key: key.key });
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([
      expect.objectContaining({ id: key.id, scope: 'provisioning', env: 'live' }),
    ]);
    // An inference key (the default scope) may not.
    const inference = await createKey(id);
    expectError(await call(gw.url, '/v1/keys', { key: inference.key }), 403, 'wrong_key_scope');
  });

  it('key create --env test mints a gw_test_ key; its provisioning key mints gw_test_ keys over HTTP', async () => {
    const id = await createAccount();
    const key = await createKey(id, '--scope', 'provisioning', '--env', 'test');
    expect(key.key).toMatch(/^gw_test_/);
    const minted = await call(gw.url, '/v1/keys', { key: key.key, json: { name: 'from test key' } });
    expect(minted.status).toBe(201);
    expect(minted.body.data.key).toMatch(/^gw_test_/);
  });

  it('project create --json → {id}; the project is usable as project_id over HTTP', async () => {
    const id = await createAccount();
    const project = jsonResult(
      await tollgate('project', 'create', '--account', id, '--name', 'proj', '--json'),
    );
    expect(project).toMatchObject({ id: expect.stringMatching(/^proj_[0-9a-z]+$/) });
    const provisioning = await createKey(id, '--scope', 'provisioning');
    const minted = await call(gw.url, '/v1/keys', {
      key: provisioning.key,
      json: { name: 'in project', project_id: project.id },
    });
    expect(minted.status).toBe(201);
    expect(minted.body.data.project_id).toBe(project.id);
  });

  it('account suspend makes every key of the account fail 403 account_suspended on the running server; unsuspend restores', async () => {
    const id = await createAccount('--credit-usd', '1');
    const other = await createAccount('--credit-usd', '1');
    const inference = await createKey(id);
    const provisioning = await createKey(id, '--scope', 'provisioning');
    const otherKey = await createKey(other);
    expect((await call(gw.url, '/v1/key', { key: inference.key })).status).toBe(200);

    const suspended = await tollgate('account', 'suspend', id);
    expect(suspended.code, suspended.stderr).toBe(0);
    expectError(await call(gw.url, '/v1/key', { key: inference.key }), 403, 'account_suspended');
    expectError(await call(gw.url, '/v1/keys', { key: provisioning.key }), 403, 'account_suspended');
    expect((await call(gw.url, '/v1/key', { key: otherKey.key })).status).toBe(200);

    const unsuspended = await tollgate('account', 'unsuspend', id);
    expect(unsuspended.code, unsuspended.stderr).toBe(0);
    expect((await call(gw.url, '/v1/key', { key: inference.key })).status).toBe(200);
    expect((await call(gw.url, '/v1/keys', { key: provisioning.key })).status).toBe(200);
  });

  it('account list, account show and key list --json read what the running server wrote', async () => {
    const id = await createAccount('--credit-usd', '10');
    const provisioning = await createKey(id, '--scope', 'provisioning');
    const minted = await call(gw.url, '/v1/keys', {
      key: provisioning.key,
      json: { name: 'minted over http', spend_limit_usd: 1.5 },
    });
    expect(minted.status).toBe(201);
    const mintedId = minted.body.data.id as string;
    expect(
      (await call(gw.url, `/v1/keys/${mintedId}`, { key: provisioning.key, method: 'DELETE' })).status,
    ).toBe(200);

    const keys = jsonResult(await tollgate('key', 'list', '--account', id, '--json'));
    expect(keys).toEqual({
      data: [
        expect.objectContaining({ id: provisioning.id, prefix: provisioning.prefix, scope: 'provisioning' }),
        expect.objectContaining({
          id: mintedId,
          name: 'minted over http',
          disabled: true,
          spend_limit_micros: 1_500_000,
          spend_limit_usd: '1.500000',
        }),
      ],
    });
    expect(JSON.stringify(keys)).not.toContain(provisioning.key);

    const shown = jsonResult(await tollgate('account', 'show', id, '--json'));
    expect(shown.data).toMatchObject({
      id,
      balance_micros: 9_500_000,
      balance_usd: '9.500000',
      suspended: false,
      key_count: 2,
      disabled_key_count: 1,
      month_to_date: { spent_micros: 0 },
    });
    const listed = jsonResult(await tollgate('account', 'list', '--json'));
    expect(listed.data).toContainEqual(expect.objectContaining({ id, balance_micros: 9_500_000 }));
  });

  it('ledger --json lists what GET /v1/ledger of the running server lists (newest first, fee line included)', async () => {
    const id = await createAccount('--credit-usd', '10');
    jsonResult(await tollgate('credits', 'add', '--account', id, '--usd', '2', '--json'));
    const key = await createKey(id);
    const cli = jsonResult(await tollgate('ledger', '--account', id, '--json'));
    const http = await call(gw.url, '/v1/ledger', { key: key.key });
    expect(http.status).toBe(200);
    expect(cli.has_more).toBe(false);
    const data = cli.data as Record<string, unknown>[];
    expect(data.map((e) => [e.kind, e.amount_micros, e.balance_after_micros])).toEqual([
      ['fee', -100_000, 11_400_000],
      ['credit', 2_000_000, 11_500_000],
      ['fee', -500_000, 9_500_000],
      ['credit', 10_000_000, 10_000_000],
    ]);
    expect(data.map(({ amount_usd: _, ...rest }) => rest)).toEqual(
      http.body.data.map(({ amount_usd: _, ...rest }: Record<string, unknown>) => rest),
    );
    const table = await tollgate('ledger', '--account', id, '--limit', '2');
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`--after ${data[1]!.id}`);
  });

  it('key revoke acts on the running server at once; a revoked key cannot be enabled', async () => {
    const id = await createAccount('--credit-usd', '1');
    const key = await createKey(id);
    const info = () => call(gw.url, '/v1/key', { key: key.key });
    expect((await info()).status).toBe(200);

    expect(jsonResult(await tollgate('key', 'revoke', key.id, '--json'))).toMatchObject({
      state: 'revoked',
      revoked: true,
    });
    expectError(await info(), 401, 'key_revoked');

    const enable = await tollgate('key', 'enable', key.id);
    expect(enable).toMatchObject({ code: 1, stdout: '' });
    expect(enable.stderr).toContain('a revoked key cannot be enabled');
    expectError(await info(), 401, 'key_revoked');
    const listed = jsonResult(await tollgate('key', 'list', '--account', id, '--json'));
    expect(listed.data).toEqual([expect.objectContaining({ id: key.id, state: 'revoked' })]);
  });

  it('a mistyped --db path is refused (exit 1) instead of read as an empty database, and is not created', async () => {
    const typo = join(dir, 'tollgat.db');
    const result = await runCli(['account', 'list', '--db', typo, '--config', configPath]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(`cannot open the SQLite database ${typo}: the file does not exist`);
    expect(existsSync(typo)).toBe(false);
  });

  it('--version, and --help on a subcommand, through the real entry point', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../packages/node-server/package.json', import.meta.url), 'utf8'),
    );
    const [printed, help] = await Promise.all([runCli(['--version']), runCli(['key', 'list', '--help'])]);
    expect(printed).toMatchObject({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: tollgate key list --account ID/);
  });

  it('a --db path in a missing directory exits 1 naming the path, and creates nothing', async () => {
    const missing = join(dir, 'no-such-dir', 'tollgate.db');
    const result = await runCli([
      'account',
      'create',
      '--name',
      'x',
      '--db',
      missing,
      '--config',
      configPath,
    ]);
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toContain(`cannot open the SQLite database ${missing}`);
    expect(result.stderr).toContain('does not exist');
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('serve with an invalid config file exits non-zero naming the JSON path, and serves nothing', async () => {
    const badConfig = join(dir, 'bad.config.json');
    writeFileSync(
      badConfig,
      JSON.stringify({ ...CLI_CONFIG, models: [{ ...CLI_CONFIG.models[0], id: 'no-vendor' }] }),
    );
    const result = await runCli([
      'serve',
      '--port',
      '0',
      '--db',
      join(dir, 'unused.db'),
      '--config',
      badConfig,
    ]);
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    expect(result.stderr).toContain('$.models[0].id');
    expect(result.stdout).toBe('');
  });

  describe('bad command lines: non-zero exit, a message on stderr, nothing on stdout', () => {
    // Concurrent: each case is its own process and none of them may write anything.
    it.concurrent.for([
      { label: 'an unknown option', args: ['account', 'create', '--name', 'x', '--bogus', '--json'] },
      { label: 'a missing required option (--name)', args: ['account', 'create', '--json'] },
      { label: 'a missing required option (--account)', args: ['credits', 'add', '--usd', '10', '--json'] },
      { label: '--usd abc', args: ['credits', 'add', '--account', 'acct_x', '--usd', 'abc', '--json'] },
      {
        label: '--usd with 7 decimals',
        args: ['credits', 'add', '--account', 'acct_x', '--usd', '1.0000001'],
      },
      { label: '--usd -5', args: ['credits', 'add', '--account', 'acct_x', '--usd', '-5', '--json'] },
      {
        label: '--credit-usd -5',
        args: ['account', 'create', '--name', 'x', '--credit-usd', '-5', '--json'],
      },
      { label: 'an unknown command', args: ['frobnicate', '--json'] },
      { label: 'an unknown subcommand', args: ['account', 'delete', 'acct_x'] },
      {
        label: 'a bad --scope',
        args: ['key', 'create', '--account', 'acct_x', '--name', 'k', '--scope', 'admin'],
      },
      {
        label: 'an unknown account',
        args: ['credits', 'add', '--account', 'acct_doesnotexist', '--usd', '10', '--json'],
      },
      { label: 'an unknown account to suspend', args: ['account', 'suspend', 'acct_doesnotexist'] },
    ])('$label', async ({ args }, { expect }) => {
      const accountsBefore = await gw.storage.countAccounts();
      const result = await tollgate(...args);
      expect(result.code, `stderr: ${result.stderr}`).not.toBe(0);
      expect(result.code).not.toBeNull();
      expect(result.stderr.trim().length).toBeGreaterThan(0);
      expect(result.stdout).toBe('');
      expect(await gw.storage.countAccounts()).toBe(accountsBefore);
    });
  });
});
