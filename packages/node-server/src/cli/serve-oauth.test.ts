import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

/**
 * `tollgate serve` and the OAuth metadata: the issuer is the config's `public_url`, else the
 * address the server listens on, whatever `Host` a request names; the authorization endpoint is the
 * dashboard's approve page; `oauth.client_credentials_ttl_s` sets the tokens' lifetime.
 */

/**
 * Serves with `config` (written as the working directory's tollgate.config.json) until `during`
 * resolves; `during` gets the URL and the provisioning key the first start printed.
 */
async function serveWith(
  config: Record<string, unknown>,
  during: (url: string, provisioningKey: string) => Promise<void>,
) {
  const cwd = mkdtempSync(join(tmpdir(), 'tollgate-serve-oauth-'));
  writeFileSync(join(cwd, 'tollgate.config.json'), JSON.stringify(config));
  let stdout = '';
  let stderr = '';
  let stop: (reason: string) => void = () => {};
  const stopped = new Promise<string>((resolve) => {
    stop = resolve;
  });
  const code = runCli(['serve', '--port', '0', '--db', join(cwd, 'serve.db')], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: { LOG_LEVEL: 'info' },
    cwd,
    waitForShutdown: () => stopped,
  });
  const started = Date.now();
  while (!stderr.includes('Tollgate listening')) {
    const exited = await Promise.race([code, new Promise((r) => setTimeout(r, 10, 'waiting'))]);
    if (exited !== 'waiting') throw new Error(`serve exited early: ${stderr}`);
    if (Date.now() - started > 20_000) throw new Error(`serve did not listen: ${stderr}`);
  }
  try {
    const provisioningKey = /Provisioning key[^:]*:\s+(gw_live_\S+)/.exec(stdout)?.[1] ?? '';
    await during(/"url":"([^"]+)"/.exec(stderr)![1]!, provisioningKey);
  } finally {
    stop('test');
  }
  expect(await code).toBe(0);
}

/** The metadata, asked for with a forged Host header. */
async function metadata(url: string) {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const req = request(`${url}/.well-known/oauth-authorization-server`, {
      headers: { host: 'evil.example' },
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
    req.end();
  });
}

const minimal = { providers: { demo: { format: 'demo' } }, models: [] };

describe('tollgate serve: the OAuth metadata', () => {
  it("names the config's public_url as issuer, never the request's Host", async () => {
    await serveWith({ ...minimal, public_url: 'https://llm.example.com/' }, async (url) => {
      const document = await metadata(url);
      expect(document.issuer).toBe('https://llm.example.com');
      expect(document.token_endpoint).toBe('https://llm.example.com/v1/oauth/token');
      const dashboard = await fetch(`${url}/dashboard/`);
      expect(document.authorization_endpoint).toBe(
        dashboard.ok ? 'https://llm.example.com/dashboard/authorize' : undefined,
      );
    });
  });

  it('without public_url, names the address it listens on', async () => {
    await serveWith(minimal, async (url) => {
      const document = await metadata(url);
      expect(document.issuer).toBe(url);
      expect(document.token_endpoint).toBe(`${url}/v1/oauth/token`);
    });
  });

  it('oauth.client_credentials_ttl_s sets expires_in', async () => {
    await serveWith(
      { ...minimal, oauth: { client_credentials_ttl_s: 600 } },
      async (url, provisioningKey) => {
        const registered = await fetch(`${url}/v1/oauth/clients`, {
          method: 'POST',
          headers: { authorization: `Bearer ${provisioningKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Batch', redirect_uris: ['https://app.example/cb'] }),
        });
        expect(registered.status).toBe(201);
        const client = (await registered.json()) as { client_id: string; client_secret: string };
        const response = await fetch(`${url}/v1/oauth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'client_credentials', ...client }).toString(),
        });
        expect(response.status).toBe(200);
        expect((await response.json()).expires_in).toBe(600);
      },
    );
  });
});
