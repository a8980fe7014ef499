import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCatalogue, hashApiKey, parseGatewayConfig, type Storage } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from './cli/run-cli.js';
import { loadConfigFile } from './config-file.js';
import { fetchCurl, findCurl } from './curl-snippet.test-support.js';
import {
  DEMO_CREDIT_MICROS,
  formatFirstStartBanner,
  modelsOverview,
  provisionFirstStart,
} from './first-start.js';
import { openStorage } from './open-storage.js';

const tempDir = (name: string) => mkdtempSync(join(tmpdir(), `tollgate-${name}-`));
const tempDb = () => join(tempDir('first'), 'first.db');
const opened: Storage[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((s) => s.close()));
});
async function open(path: string) {
  const storage = await openStorage(path);
  opened.push(storage);
  return storage;
}

/** The example config's catalogue, with these provider keys in the environment. */
function exampleOverview(env: Record<string, string> = {}) {
  const loaded = loadConfigFile({ cwd: tempDir('config'), env });
  return modelsOverview(loaded.catalogue, loaded.config.providers);
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

  it('without provider keys, the demo models are the usable ones and the snippets call demo/chat-small', () => {
    const overview = exampleOverview();
    expect(overview.snippetModel).toBe('demo/chat-small');
    const usable = Object.fromEntries(overview.usable.map((g) => [g.provider.id, g.models]));
    expect(usable).toEqual({
      demo: [
        { id: 'demo/chat-small', type: 'chat' },
        { id: 'demo/chat-large', type: 'chat' },
        { id: 'demo/embedding-small', type: 'embedding' },
        { id: 'demo/image-small', type: 'image' },
        { id: 'demo/rerank-small', type: 'rerank' },
      ],
    });
    // The local Ollama did not answer (no probe said so): not offered as callable.
    expect(overview.notAnswering.map((g) => [g.provider.id, g.models])).toEqual([
      ['local', ['local/llama3.2']],
    ]);
    const waiting = Object.fromEntries(overview.waiting.map((w) => [w.needs, w.models]));
    expect(waiting.OPENAI_API_KEY).toEqual([
      'openai/gpt-4o-mini',
      'openai/gpt-4.1',
      'openai/text-embedding-3-small',
      'openai/gpt-image-1',
    ]);
    expect(waiting.ANTHROPIC_API_KEY).toContain('anthropic/claude-sonnet-4');
    expect(waiting.COHERE_API_KEY).toEqual(['cohere/rerank-v3.5']);
  });

  it('a local provider that answered the probe is callable, after the demo in the snippets', () => {
    const loaded = loadConfigFile({ cwd: tempDir('config'), env: {} });
    const overview = modelsOverview(loaded.catalogue, loaded.config.providers, new Set(['local']));
    expect(overview.usable.map((g) => g.provider.id)).toEqual(['local', 'demo']);
    expect(overview.notAnswering).toEqual([]);
    expect(overview.snippetModel).toBe('demo/chat-small');
  });

  it('never picks a model of another type for the chat snippets', () => {
    const catalogue = buildCatalogue(
      parseGatewayConfig({
        providers: { local: { format: 'openai', base_url: 'http://127.0.0.1:1/v1', api_key: 'k' } },
        models: [
          {
            id: 'local/embed',
            type: 'embedding',
            endpoints: [{ provider: 'local', upstream_model: 'e', pricing: { prompt: '0.02' } }],
          },
          {
            id: 'local/chat',
            max_output_tokens: 100,
            endpoints: [
              { provider: 'local', upstream_model: 'c', pricing: { prompt: '1', completion: '1' } },
            ],
          },
        ],
      }),
    );
    expect(modelsOverview(catalogue, {}, new Set(['local'])).snippetModel).toBe('local/chat');
    expect(modelsOverview(catalogue, {}).snippetModel).toBeNull();
  });

  it("with a real provider's key set, the snippets call that provider's model", () => {
    const overview = exampleOverview({ ANTHROPIC_API_KEY: 'sk-ant-test' });
    expect(overview.snippetModel).toBe('anthropic/claude-sonnet-4');
    expect(overview.usable.map((g) => g.provider.id)).toEqual(['anthropic', 'demo']);
    expect(overview.waiting.map((w) => w.needs)).not.toContain('ANTHROPIC_API_KEY');
  });

  it('the banner shows both keys, the usable models by type, a chat curl, a /v1/key curl and an OpenAI-SDK snippet', async () => {
    const result = await provisionFirstStart(await open(tempDb()));
    const banner = formatFirstStartBanner(result!, 'http://127.0.0.1:8787', exampleOverview());
    const key = result!.inferenceKey;
    expect(banner).toContain(result!.provisioningKey);
    const callable = banner.slice(
      banner.indexOf('Models you can call now:'),
      banner.indexOf('Not answering now'),
    );
    expect(callable.split('\n').slice(1, -1)).toEqual([
      '  demo: offline demo, answers in-process, metered like a real provider',
      '    chat        demo/chat-small, demo/chat-large',
      '    embedding   demo/embedding-small',
      '    image       demo/image-small',
      '    rerank      demo/rerank-small',
    ]);
    expect(banner).toContain(
      'Not answering now (a local server that is not running; start it, no restart needed):\n' +
        '  local (http://127.0.0.1:11434/v1)   local/llama3.2\n',
    );
    expect(banner).toMatch(/OPENAI_API_KEY +openai\/gpt-4o-mini, openai\/gpt-4.1/);
    const chat = findCurl(banner, '/v1/chat/completions');
    expect(chat).toMatchObject({
      url: 'http://127.0.0.1:8787/v1/chat/completions',
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    });
    expect(JSON.parse(chat.body!)).toEqual({
      model: 'demo/chat-small',
      messages: [{ role: 'user', content: 'Hello!' }],
    });
    expect(banner).toContain(`curl http://127.0.0.1:8787/v1/key -H "Authorization: Bearer ${key}"`);
    expect(banner).toContain(`new OpenAI({ baseURL: 'http://127.0.0.1:8787/v1', apiKey: '${key}' })`);
    expect(banner).toContain("model: 'demo/chat-small'");
    expect(banner).not.toContain('/dashboard');
  });

  it('with the dashboard built, the banner names its URL and the key to sign in with', async () => {
    const result = await provisionFirstStart(await open(tempDb()));
    const banner = formatFirstStartBanner(result!, 'http://127.0.0.1:8787/', exampleOverview(), {
      dashboard: true,
    });
    expect(banner).toContain(
      'Dashboard: http://127.0.0.1:8787/dashboard/  (sign in with the provisioning key)',
    );
  });

  it('with no usable model at all, the banner says so and prints no chat curl', async () => {
    const result = await provisionFirstStart(await open(tempDb()));
    const banner = formatFirstStartBanner(result!, 'http://127.0.0.1:8787', {
      usable: [],
      waiting: [{ needs: 'OPENAI_API_KEY', models: ['openai/gpt-4o-mini'] }],
      notAnswering: [],
      snippetModel: null,
    });
    expect(banner).toContain('No model can be called yet');
    expect(banner).not.toContain('/v1/chat/completions');
    expect(banner).toContain("model: 'openai/gpt-4o-mini'");
  });
});

describe('tollgate serve: first start', () => {
  interface ServeRun {
    code: Promise<number>;
    stdout: () => string;
    stderr: () => string;
    stop: (reason: string) => void;
  }

  /** `serve --db db --port port` in-process, with the example config and no provider key. */
  function serve(db: string, port: number): ServeRun {
    let stdout = '';
    let stderr = '';
    let stop!: (reason: string) => void;
    const stopped = new Promise<string>((resolve) => {
      stop = resolve;
    });
    const code = runCli(['serve', '--port', String(port), '--db', db], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      env: { LOG_LEVEL: 'info', TOLLGATE_DRAIN_DELAY_MS: '0' },
      cwd: tempDir('serve'),
      waitForShutdown: () => stopped,
    });
    return { code, stdout: () => stdout, stderr: () => stderr, stop };
  }

  /**
   * Starts, waits for the listening line (and, with `during`, for the banner, printed once the local
   * providers are probed), runs `during`, stops; resolves the exit code 0 and the output.
   */
  async function serveOnce(db: string, during?: (url: string, stdout: string) => Promise<void>) {
    const run = serve(db, 0);
    const started = Date.now();
    const ready = () =>
      run.stderr().includes('Tollgate listening') && (!during || run.stdout().includes('/v1/key'));
    while (!ready()) {
      const exited = await Promise.race([run.code, new Promise((r) => setTimeout(r, 10, 'waiting'))]);
      if (exited !== 'waiting') throw new Error(`serve exited early: ${run.stderr()}`);
      if (Date.now() - started > 20_000) throw new Error(`serve did not listen: ${run.stderr()}`);
    }
    const url = /"url":"([^"]+)"/.exec(run.stderr())?.[1];
    try {
      await during?.(url!, run.stdout());
    } finally {
      run.stop('test');
    }
    expect(await run.code).toBe(0);
    return { stdout: run.stdout(), stderr: run.stderr(), url };
  }

  it('prints the keys once on an empty database, and the printed curl is charged; nothing on the second start', async () => {
    const db = tempDb();
    const first = await serveOnce(db, async (url, stdout) => {
      const curl = findCurl(stdout, '/v1/chat/completions');
      expect(curl.url).toBe(`${url}/v1/chat/completions`);
      const response = await fetchCurl(curl);
      const body = await response.json();
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.model).toBe('demo/chat-small');
      expect(body.choices[0].message.content).toContain('demo');
      expect(body.gateway.cost_micros).toBeGreaterThan(0);
      expect(body.usage.completion_tokens).toBeGreaterThan(0);

      const storage = await open(db);
      const account = (await storage.findApiKeyByHash(
        await hashApiKey(curl.headers.Authorization!.slice(7)),
      ))!.account;
      const ledger = await storage.listLedgerEntries(account.id);
      expect(ledger.map((e) => [e.kind, e.amountMicros])).toEqual([
        ['credit', DEMO_CREDIT_MICROS],
        ['charge', -body.gateway.cost_micros],
      ]);
      const record = await storage.getRequestRecord(account.id, body.gateway.request_id);
      expect(record).toMatchObject({
        status: 'success',
        costMicros: body.gateway.cost_micros,
        promptTokens: body.usage.prompt_tokens,
        completionTokens: body.usage.completion_tokens,
      });
    });
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    // Each key, then the inference key in the chat curl, the balance curl and the SDK snippet.
    expect(first.stdout.match(/gw_live_[A-Za-z0-9_-]{32}/g)).toHaveLength(5);
    expect(first.stdout).toContain(`curl ${first.url}/v1/key`);
    expect(first.stderr).not.toMatch(/gw_live_/);

    const second = await serveOnce(db);
    expect(second.stdout).toBe('');
  });

  it('a start on a port in use fails with a clear message and creates nothing; the next start prints the keys', async () => {
    const db = tempDb();
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = serve(db, port);
      expect(await run.code).toBe(1);
      expect(run.stderr()).toContain(`cannot listen on 127.0.0.1:${port}: the port is already in use`);
      expect(run.stdout()).toBe('');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    const storage = await open(db);
    expect(await storage.countAccounts()).toBe(0);

    const next = await serveOnce(db);
    expect(next.stdout.match(/gw_live_[A-Za-z0-9_-]{32}/g)?.length).toBeGreaterThan(0);
    expect(await storage.countAccounts()).toBe(1);
  });
});
