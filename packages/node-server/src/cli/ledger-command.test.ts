import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../open-storage.js';
import { runCli } from './run-cli.js';

/** Runs the CLI in-process against a fresh, empty SQLite file in a temp directory (the bundled example config). */
function cliHarness() {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-ledger-cli-'));
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
      env: {},
      cwd,
    });
    return { code, stdout, stderr };
  };
  return { cwd, db, run };
}

interface JsonEntry {
  id: string;
  created_at: string;
  amount_micros: number;
  amount_usd: string;
  balance_after_micros: number;
  kind: string;
  request_id: string | null;
  description: string;
}

describe('tollgate ledger', () => {
  it('--json prints one object: the entries newest first with the balance after each, and has_more', async () => {
    const cli = cliHarness();
    const created = await cli.run('account', 'create', '--name', 'Acme', '--json');
    const accountId = (JSON.parse(created.stdout) as { id: string }).id;
    expect((await cli.run('credits', 'add', '--account', accountId, '--usd', '2.5')).code).toBe(0);
    const storage = await openStorage(cli.db, cli.cwd);
    try {
      await storage.appendLedgerEntries(accountId, [
        { amountMicros: -1_234, kind: 'charge', description: 'acme/fast: 1 in, 2 out', requestId: 'req_1' },
        { amountMicros: 1_234, kind: 'adjustment', description: 'refund' },
      ]);
    } finally {
      await storage.close();
    }

    const result = await cli.run('ledger', '--account', accountId, '--json');
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    const out = JSON.parse(result.stdout) as { data: JsonEntry[]; has_more: boolean };
    expect(out.has_more).toBe(false);
    expect(out.data[0]).toMatchObject({ kind: 'correction', amount_micros: 1_234, amount_usd: '0.001234' });
    expect(out.data[1]).toMatchObject({
      kind: 'charge',
      amount_micros: -1_234,
      amount_usd: '-0.001234',
      request_id: 'req_1',
      description: 'acme/fast: 1 in, 2 out',
    });
    expect(out.data[0]!.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Each balance after is the one before it plus its amount (newest first: read backwards).
    for (let i = 0; i < out.data.length - 1; i++) {
      expect(out.data[i]!.balance_after_micros).toBe(
        out.data[i + 1]!.balance_after_micros + out.data[i]!.amount_micros,
      );
    }
    expect(out.data.at(-1)!.kind).toBe('credit');

    const page = await cli.run('ledger', '--account', accountId, '--limit', '1', '--json');
    const first = JSON.parse(page.stdout) as { data: JsonEntry[]; has_more: boolean };
    expect(first.data.map((e) => e.id)).toEqual([out.data[0]!.id]);
    expect(first.has_more).toBe(true);
    const next = await cli.run('ledger', '--account', accountId, '--after', out.data[0]!.id, '--json');
    expect((JSON.parse(next.stdout) as { data: JsonEntry[] }).data).toEqual(out.data.slice(1));
  });

  it('prints a table by default, and a hint when more entries follow', async () => {
    const cli = cliHarness();
    const created = await cli.run('account', 'create', '--name', 'Acme', '--credit-usd', '5', '--json');
    const accountId = (JSON.parse(created.stdout) as { id: string }).id;
    const table = await cli.run('ledger', '--account', accountId);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+CREATED\s+KIND\s+AMOUNT\s+BALANCE AFTER\s+REQUEST\s+DESCRIPTION$/);
    expect(table.stdout).toContain('$5.000000');
    expect(table.stdout).toContain('credit');

    const limited = await cli.run('ledger', '--account', accountId, '--limit', '1');
    const more = limited.stdout.includes('More entries:');
    expect(more).toBe(lines.length - 1 > 1);

    const empty = await cli.run('account', 'create', '--name', 'Empty', '--json');
    const emptyId = (JSON.parse(empty.stdout) as { id: string }).id;
    expect((await cli.run('ledger', '--account', emptyId)).stdout).toBe(`No ledger entries for ${emptyId}\n`);
  });

  it('refuses a bad limit (2), an unknown account or cursor (1), and has --help', async () => {
    const cli = cliHarness();
    const created = await cli.run('account', 'create', '--name', 'Acme', '--json');
    const accountId = (JSON.parse(created.stdout) as { id: string }).id;
    for (const limit of ['0', '201', 'x']) {
      const result = await cli.run('ledger', '--account', accountId, '--limit', limit);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--limit must be an integer from 1 to 200');
    }
    expect((await cli.run('ledger')).code).toBe(2);
    const unknown = await cli.run('ledger', '--account', 'acct_nope');
    expect(unknown.code).toBe(1);
    const cursor = await cli.run('ledger', '--account', accountId, '--after', 'led_nope');
    expect(cursor).toMatchObject({ code: 1, stdout: '' });
    expect(cursor.stderr).toContain('led_nope');

    const help = await cli.run('ledger', '--help');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      'Usage: tollgate ledger --account ID [--limit N] [--after ENTRY_ID] [--json]',
    );
    expect((await cli.run('--help')).stdout).toContain('ledger --account ID');
  });
});
