import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { chargesOf } from './helpers/chat-wire.js';
import { call } from './helpers/http.js';
import { DEMO, startMessagesGateway } from './helpers/messages-gateway.js';
import { describeOnEachVariant } from './helpers/start-e2e-gateway.js';

/**
 * Claude Code itself (`@anthropic-ai/claude-code`, pinned; its native binary ships in the npm
 * package for each platform) pointed at the real Node server with `ANTHROPIC_BASE_URL`, answered
 * offline by the demo model: `claude -p` with the key as `ANTHROPIC_API_KEY` (sent as `x-api-key`)
 * and as `ANTHROPIC_AUTH_TOKEN` (a bearer token), in a fresh HOME and config dir, telemetry and
 * auto-updates off. Built-in tools are turned off (`--tools ""`): the demo model calls the first
 * tool it is offered whatever the turn, so with tools a session would never end.
 */

const run = promisify(execFile);

/** The native binary of this platform's package (glibc or musl), or why there is none. */
function claudeBinary(): { path: string } | { skip: string } {
  const base = `@anthropic-ai/claude-code-${process.platform}-${process.arch}`;
  for (const name of [base, `${base}-musl`]) {
    try {
      const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
      const path = join(dirname(manifest), process.platform === 'win32' ? 'claude.exe' : 'claude');
      if (existsSync(path)) return { path };
    } catch {
      // not installed: npm installs only the packages of its own platform
    }
  }
  return { skip: `no ${base} package with its binary is installed` };
}

const binary = claudeBinary();
if ('skip' in binary) console.info(`[e2e] Claude Code is skipped: ${binary.skip}`);

describeOnEachVariant(
  'Claude Code against Tollgate (offline, the demo model)',
  startMessagesGateway,
  (gw) => {
    it.skipIf('skip' in binary).each([
      ['ANTHROPIC_API_KEY', 'x-api-key'],
      ['ANTHROPIC_AUTH_TOKEN', 'Authorization: Bearer'],
    ])(
      'claude -p answers through /v1/messages with the key in %s (%s), metered and charged',
      async (variable) => {
        const g = gw();
        const tenant = await g.newTenant();
        const home = mkdtempSync(join(tmpdir(), 'tollgate-claude-code-'));
        try {
          const { stdout } = await run(
            (binary as { path: string }).path,
            ['-p', 'Say hello', '--tools', ''],
            {
              cwd: home,
              timeout: 60_000,
              env: {
                PATH: process.env.PATH,
                HOME: home,
                CLAUDE_CONFIG_DIR: join(home, '.claude'),
                ANTHROPIC_BASE_URL: g.url,
                [variable]: tenant.inferenceKey,
                ANTHROPIC_MODEL: DEMO,
                ANTHROPIC_SMALL_FAST_MODEL: DEMO,
                ANTHROPIC_DEFAULT_HAIKU_MODEL: DEMO,
                DISABLE_AUTOUPDATER: '1',
                DISABLE_TELEMETRY: '1',
                DISABLE_ERROR_REPORTING: '1',
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
              },
            },
          );
          expect(stdout).toContain('Hello from chat-small, the offline demo model of Tollgate.');
        } finally {
          rmSync(home, { recursive: true, force: true });
        }
        const listed = await call(g.url, '/v1/generations', { key: tenant.inferenceKey });
        const records = listed.body.data as {
          endpoint: string;
          status: string;
          model: string;
          cost_micros: number;
        }[];
        expect(records.length).toBeGreaterThan(0);
        for (const record of records) {
          expect(record).toMatchObject({ endpoint: 'messages', status: 'success', model: DEMO });
          expect(record.cost_micros).toBeGreaterThan(0);
        }
        const charges = await chargesOf(g.storage, tenant.account.id);
        const byAmount = (a: number, b: number) => a - b;
        expect(charges.map((c) => -c.amountMicros).sort(byAmount)).toEqual(
          records.map((r) => r.cost_micros).sort(byAmount),
        );
      },
    );
  },
);
