import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGatewayConfig } from '@tollgate/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargesOf, settledGeneration } from './helpers/chat-wire.js';
import { type E2eGateway, startE2eGateway } from './helpers/start-e2e-gateway.js';
import { openSqlite } from './helpers/storage-variants.js';

/**
 * Codex itself (`@openai/codex` 0.171.0, the native binary its npm package ships) against the real
 * Node server on the offline demo provider: `codex exec` with a model provider whose `base_url` is
 * the gateway (`wire_api = "responses"`, the only wire Codex speaks), in a temporary CODEX_HOME with
 * update checks, analytics and telemetry export off. Codex offers its tools on every turn, so the
 * demo model calls one first (Codex runs it in a read-only sandbox) and answers the tool's result
 * in text, which ends the run. Every turn is a metered `responses` request.
 */

const CODEX = join(
  createRequire(import.meta.url).resolve('@openai/codex/package.json'),
  '..',
  'bin',
  'codex.js',
);
/** The most one `codex exec` may take before the test kills it (it answers in about 2 s). */
const RUN_LIMIT_MS = 60_000;

const demoConfig = parseGatewayConfig({
  providers: { demo: { format: 'demo' } },
  models: [
    {
      id: 'demo/chat',
      max_output_tokens: 1000,
      capabilities: { tools: true },
      endpoints: [
        { provider: 'demo', upstream_model: 'chat-small', pricing: { prompt: '0.1', completion: '0.2' } },
      ],
    },
  ],
});

function codexConfig(baseUrl: string): string {
  return `model = "demo/chat"
model_provider = "tollgate"
check_for_update_on_startup = false

[model_providers.tollgate]
name = "Tollgate"
base_url = "${baseUrl}/v1"
env_key = "TOLLGATE_API_KEY"
wire_api = "responses"

[analytics]
enabled = false

[otel]
exporter = "none"
`;
}

/** Runs `codex exec` to its end (killed past `RUN_LIMIT_MS`): exit code, stdout, stderr. */
function codexExec(
  prompt: string,
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group: the npm wrapper starts the native binary, and a kill must reach both.
    const child = spawn(
      process.execPath,
      [CODEX, 'exec', '--skip-git-repo-check', '--sandbox', 'read-only', prompt],
      {
        cwd,
        env: { PATH: process.env.PATH ?? '', HOME: env.CODEX_HOME!, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const limit = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), RUN_LIMIT_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(limit);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('codex exec against the gateway on the demo provider', () => {
  let g: E2eGateway;
  let home: string;

  beforeAll(async () => {
    g = await startE2eGateway({ config: () => demoConfig, open: () => openSqlite(), undici: true });
    home = mkdtempSync(join(tmpdir(), 'tollgate-codex-'));
  });
  afterAll(async () => {
    await g?.close();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('answers: every turn a metered POST /v1/responses, the run ends with the demo’s text', async () => {
    const tenant = await g.newTenant();
    const codexDir = mkdtempSync(join(home, 'codex-home-'));
    const workDir = mkdtempSync(join(home, 'work-'));
    writeFileSync(join(codexDir, 'config.toml'), codexConfig(g.url));

    const result = await codexExec(
      'Say hello.',
      { CODEX_HOME: codexDir, TOLLGATE_API_KEY: tenant.inferenceKey },
      workDir,
    );
    expect(result.code, `stdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0);
    expect(result.stdout).toContain('the offline demo model of Tollgate');

    const charges = await chargesOf(g.storage, tenant.account.id);
    // The tool call, then the answer to its result.
    expect(charges.length).toBeGreaterThanOrEqual(2);
    for (const charge of charges) {
      expect(await settledGeneration(g.url, tenant.inferenceKey, charge.requestId!)).toMatchObject({
        endpoint: 'responses',
        stream: true,
        status: 'success',
        model: 'demo/chat',
        cost_micros: -charge.amountMicros,
      });
    }
  }, 120_000);
});
