import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashApiKey, type Storage } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from './cli/run-cli.js';
import { DEMO_CREDIT_MICROS, formatFirstStartBanner, provisionFirstStart } from './first-start.js';
import { openStorage } from './open-storage.js';

const tempDb = () => join(mkdtempSync(join(tmpdir(), 'tollgate-first-')), 'first.db');
const opened: Storage[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
async function open(path: string) {
  const storage = await openStorage(path);
  opened.push(storage);
  return storage;
}

describe('first start', () => {
  it('provisions a default account with $5 demo credit (one credit line, no fee), a project and two keys', async () => {
    const storage = await open(tempDb());
    const result = await provisionFirstStart(storage);
    expect(result).not.toBeNull();
    const { account, project, provisioningKey, inferenceKey } = result!;
    expect(account).toMatchObject({ name: 'Default account', balanceMicros: DEMO_CREDIT_MICROS });
    expect(project.accountId).toBe(account.id);
    const ledger = await storage.listLedgerEntries(account.id);
    expect(ledger.map((e) => [e.kind, e.amountMicros])).toEqual([['credit', 5_000_000]]);
    expect((await storage.findApiKeyByHash(await hashApiKey(provisioningKey)))?.key.scope).toBe(
      'provisioning',
    );
    expect((await storage.findApiKeyByHash(await hashApiKey(inferenceKey)))?.key.scope).toBe('inference');
  });

  it('provisions nothing when an account exists (a second start)', async () => {
    const storage = await open(tempDb());
    expect(await provisionFirstStart(storage)).not.toBeNull();
    expect(await provisionFirstStart(storage)).toBeNull();
    expect(await storage.countAccounts()).toBe(1);
  });

  it('the banner shows both keys, a curl against /v1/key and an OpenAI-SDK snippet', async () => {
    const result = await provisionFirstStart(await open(tempDb()));
    const banner = formatFirstStartBanner(result!, 'http://127.0.0.1:8787');
    expect(banner).toContain(result!.provisioningKey);
    expect(banner).toContain(
      `curl http://127.0.0.1:8787/v1/key -H "Authorization: Bearer ${result!.inferenceKey}"`,
    );
    expect(banner).toContain(
      `new OpenAI({ baseURL: 'http://127.0.0.1:8787/v1', apiKey: '${result!.inferenceKey}' })`,
    );
  });

  it('serve prints the keys once on an empty database, and nothing on the second start', async () => {
    const db = tempDb();
    const serveOnce = async () => {
      let stdout = '';
      let stderr = '';
      let stop!: (reason: string) => void;
      let listening!: () => void;
      const up = new Promise<void>((resolve) => {
        listening = resolve;
      });
      const code = runCli(['serve', '--port', '0', '--db', db], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: {
          write: (text: string) => {
            stderr += text;
            if (text.includes('Tollgate listening')) listening();
          },
        },
        env: { LOG_LEVEL: 'info' },
        cwd: mkdtempSync(join(tmpdir(), 'tollgate-serve-')),
        waitForShutdown: () => new Promise((resolve) => (stop = resolve)),
      });
      await Promise.race([up, code.then(() => Promise.reject(new Error(`serve exited early: ${stderr}`)))]);
      const url = /"url":"([^"]+)"/.exec(stderr)?.[1];
      stop('test');
      expect(await code).toBe(0);
      return { stdout, stderr, url };
    };

    const first = await serveOnce();
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(first.stdout.match(/gw_live_[A-Za-z0-9_-]{32}/g)).toHaveLength(4); // each key, plus curl + snippet
    expect(first.stdout).toContain(`curl ${first.url}/v1/key`);
    expect(first.stderr).not.toMatch(/gw_live_/);

    const second = await serveOnce();
    expect(second.stdout).toBe('');
  });
});
