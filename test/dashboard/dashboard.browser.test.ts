import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dashboardDistDir } from '@tollgate/node-server';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, cliEnv, EXAMPLE_CONFIG, REPO_ROOT, serveArgs } from '../helpers/cli-process.js';
import { call } from '../helpers/http.js';

/**
 * The dashboard in a real browser (Debian's Chromium driven by playwright-core) against a real
 * `tollgate serve` with the offline demo provider: sign in, the balance, a key created and its
 * secret read once, a request made with it and found in the requests and the chart, the ledger and
 * its CSV, the OAuth approve page, the key revoked, sign out. Throughout, the browser may fetch
 * nothing but the dashboard's own files and `/v1` calls of its origin, and keep the key only in the
 * tab's session storage. Screenshots of each page go to `test-results/dashboard/` (not committed).
 *
 * Chromium comes from `apt-get install chromium` (`.ci/run` installs it). Outside CI a machine
 * without it skips this file; in CI (`CI=true`) a missing browser fails it.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
const inCi = process.env.CI === 'true';
const SHOTS = join(REPO_ROOT, 'test-results', 'dashboard');
const LISTENING = /listening on (http:\/\/127\.0\.0\.1:\d+)/;
/** Where the OAuth client wants the account holder sent back: answered by the test, never reached. */
const REDIRECT_URI = 'http://127.0.0.1:9/oauth/callback';

let dir: string;
let server: CliProcess;
let origin: string;
let provisioningKey: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Every request the browser made, and the browser's errors (a CSP violation is one). */
const requests: { url: string; type: string }[] = [];
const browserErrors: string[] = [];

/** The created key's id and secret, filled in by the key step. */
let newKey: { id: string; secret: string };
let requestId: string;

const byTestId = (id: string) => page.getByTestId(id);
const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

describe.skipIf(!hasChromium && !inCi)('the dashboard in a browser', () => {
  beforeAll(async () => {
    expect(hasChromium, `no Chromium at ${CHROMIUM}: apt-get install -y chromium`).toBe(true);
    const dist = dashboardDistDir();
    expect(dist && existsSync(join(dist, 'index.html')), 'the dashboard is not built: npm run build').toBe(
      true,
    );
    mkdirSync(SHOTS, { recursive: true });
    dir = mkdtempSync(join(tmpdir(), 'tollgate-dashboard-browser-'));
    const noKeys = { OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', GROQ_API_KEY: '', DEEPSEEK_API_KEY: '' };
    server = new CliProcess(serveArgs(join(dir, 'tollgate.db'), EXAMPLE_CONFIG, 5_000), cliEnv(noKeys));
    [, origin] = (await server.waitFor(LISTENING, 'stderr')) as [string, string];
    const [, dashboardUrl] = (await server.waitFor(/Dashboard: (\S+)/, 'stdout')) as [string, string];
    expect(dashboardUrl).toBe(`${origin}/dashboard/`);
    [, provisioningKey] = (await server.waitFor(/Provisioning key \(manage keys\): +(gw_\S+)/, 'stdout')) as [
      string,
      string,
    ];

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-dev-shm-usage',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, acceptDownloads: true });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
    page = await context.newPage();
    page.on('request', (request) => requests.push({ url: request.url(), type: request.resourceType() }));
    page.on('console', (message) => {
      if (message.type() === 'error') browserErrors.push(message.text());
    });
    page.on('pageerror', (error) => browserErrors.push(error.message));
    // The OAuth client's redirect target is not ours: answer it here, so nothing leaves loopback.
    await page.route(`${REDIRECT_URI}**`, (route) => route.fulfill({ status: 200, body: 'client callback' }));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.stop('SIGTERM');
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('signs in with the provisioning key, kept only in the tab session, and shows the balance', async () => {
    await page.goto(`${origin}/dashboard`);
    await byTestId('signin-key').fill(provisioningKey);
    await byTestId('signin-submit').click();
    await expect.poll(() => byTestId('balance').textContent()).toMatch(/\$\s?5(\.0+)?\b/);
    await expect.poll(() => byTestId('month-to-date').textContent()).toMatch(/\$/);
    const stored = await page.evaluate(() => ({
      session: Object.keys(sessionStorage).map((name) => sessionStorage.getItem(name)),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    expect(stored).toEqual({ session: [provisioningKey], local: 0, cookie: '' });
    expect(await context.cookies()).toEqual([]);
    await shot('overview-empty');
  });

  it('creates a key and shows its secret exactly once', async () => {
    await byTestId('nav-keys').click();
    await byTestId('key-create-name').fill('browser test key');
    await byTestId('key-create-limit').fill('2.5');
    await byTestId('key-create-rpm').fill('30');
    await byTestId('key-create-submit').click();
    const secret = (await byTestId('key-secret').textContent())?.trim() ?? '';
    expect(secret).toMatch(/^gw_(live|test)_[A-Za-z0-9_-]{32}$/);
    await byTestId('key-secret-copy').click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shot('keys-secret-once');
    await byTestId('key-secret-done').click();
    await expect.poll(() => byTestId('key-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    const keys = await call(origin, '/v1/keys', { key: provisioningKey });
    const created = keys.body.data.find((k: { name: string }) => k.name === 'browser test key');
    expect(created).toMatchObject({ spend_limit_usd: 2.5, rate_limit_rpm: 30, disabled: false });
    newKey = { id: created.id, secret };
    const row = page.locator(`[data-testid="key-row"][data-key-id="${newKey.id}"]`);
    await expect.poll(() => row.getByTestId('key-status').textContent()).toMatch(/active/);

    // Back on the page later: the secret is never shown again.
    await page.reload();
    await byTestId('nav-keys').click();
    await expect.poll(() => row.count()).toBe(1);
    expect(await page.content()).not.toContain(secret);
    await shot('keys');
  });

  it('a request made with the new key shows in the requests, its detail, the chart and the top models', async () => {
    const answer = await call(origin, '/v1/chat/completions', {
      key: newKey.secret,
      json: {
        model: 'demo/chat-small',
        messages: [{ role: 'user', content: 'Hello from the browser test' }],
        metadata: { suite: 'dashboard' },
      },
    });
    expect(answer.status, answer.text).toBe(200);
    requestId = answer.body.gateway.request_id;

    await byTestId('nav-requests').click();
    const row = page.locator(`[data-testid="request-row"][data-request-id="${requestId}"]`);
    await expect.poll(() => row.count()).toBe(1);
    await byTestId('filter-label').fill('suite=other');
    await byTestId('filter-apply').click();
    await expect.poll(() => row.count()).toBe(0);
    await byTestId('filter-label').fill('suite=dashboard');
    await byTestId('filter-key').selectOption(newKey.id);
    await byTestId('filter-apply').click();
    await expect.poll(() => row.count()).toBe(1);
    await shot('requests');

    await row.click();
    await expect.poll(() => byTestId('request-detail').textContent()).toContain('demo/chat-small');
    expect(await byTestId('request-detail').textContent()).toContain(requestId);
    await shot('request-detail');

    await byTestId('nav-overview').click();
    await expect.poll(() => byTestId('top-models').textContent()).toContain('demo/chat-small');
    await expect.poll(() => byTestId('spend-chart').locator('canvas').count()).toBeGreaterThan(0);
    // The chart plots today's spend: the request's cost is in its data.
    const cost = answer.body.gateway.cost_micros as number;
    expect(cost).toBeGreaterThan(0);
    await expect.poll(() => byTestId('spend-chart').getAttribute('data-total-micros')).toBe(String(cost));
    await byTestId('range-30').click();
    await expect.poll(() => byTestId('spend-chart').getAttribute('data-days')).toBe('30');
    await expect.poll(() => byTestId('error-rate').textContent()).toMatch(/0(\.0+)?\s?%/);
    await shot('overview');
  });

  it('pages the ledger and downloads the requests as CSV', async () => {
    await byTestId('nav-ledger').click();
    await expect.poll(() => byTestId('ledger-row').count()).toBeGreaterThanOrEqual(2);
    expect(await page.locator('[data-testid="ledger-row"]').first().textContent()).toContain(requestId);
    await shot('ledger');
    const [download] = await Promise.all([page.waitForEvent('download'), byTestId('export-csv').click()]);
    const csv = readFileSync((await download.path())!, 'utf8');
    expect(csv.split('\n')[0]).toMatch(/^request_id,created_at,key_id,model/);
    expect(csv).toContain(requestId);
  });

  it('approves an OAuth client on the approve page, and the code redeems for a key', async () => {
    const client = await call(origin, '/v1/oauth/clients', {
      method: 'POST',
      key: provisioningKey,
      json: { name: 'Browser Test App', redirect_uris: [REDIRECT_URI] },
    });
    expect(client.status, client.text).toBe(201);
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client.body.client_id,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'state-123',
      spend_limit_usd: '1.5',
    });
    // The approve page is where the RFC 8414 metadata sends a client's user.
    const metadata = await call(origin, '/.well-known/oauth-authorization-server');
    expect(metadata.body.authorization_endpoint).toBe(`${origin}/dashboard/authorize`);
    await page.goto(`${metadata.body.authorization_endpoint}?${query}`);
    await expect.poll(() => byTestId('authorize-client-name').textContent()).toContain('Browser Test App');
    await shot('oauth-approve');
    await Promise.all([page.waitForURL(`${REDIRECT_URI}**`), byTestId('authorize-approve').click()]);
    const back = new URL(page.url());
    expect(back.searchParams.get('state')).toBe('state-123');
    const token = await call(origin, '/v1/oauth/token', {
      json: {
        grant_type: 'authorization_code',
        code: back.searchParams.get('code'),
        redirect_uri: REDIRECT_URI,
        client_id: client.body.client_id,
        client_secret: client.body.client_secret,
        code_verifier: verifier,
      },
    });
    expect(token.status, token.text).toBe(200);
    const info = await call(origin, '/v1/key', { key: token.body.access_token });
    expect(info.body.data.key_spend.limit_usd).toBe(1.5);
  });

  it('pauses and resumes a key', async () => {
    await page.goto(`${origin}/dashboard/#/keys`);
    const row = page.locator(`[data-testid="key-row"][data-key-id="${newKey.id}"]`);
    await row.getByTestId('key-disable').click();
    await expect.poll(() => row.getByTestId('key-status').textContent()).toMatch(/disabled/);
    expect((await call(origin, '/v1/key', { key: newKey.secret })).status).toBe(401);
    await row.getByTestId('key-enable').click();
    await expect.poll(() => row.getByTestId('key-status').textContent()).toMatch(/active/);
    expect((await call(origin, '/v1/key', { key: newKey.secret })).status).toBe(200);
  });

  it('revokes the key for good: shown revoked with no Enable, and the key is refused', async () => {
    await page.goto(`${origin}/dashboard/#/keys`);
    const row = page.locator(`[data-testid="key-row"][data-key-id="${newKey.id}"]`);
    await row.getByTestId('key-revoke').click();
    await row.getByTestId('key-revoke-confirm').click();
    await expect.poll(() => row.getByTestId('key-status').textContent()).toMatch(/revoked/);
    for (const action of ['key-enable', 'key-disable', 'key-revoke']) {
      expect(await row.getByTestId(action).count(), action).toBe(0);
    }
    await shot('keys-revoked');
    const refused = await call(origin, '/v1/key', { key: newKey.secret });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('key_revoked');
  });

  it("the signed-in key's row offers neither Disable nor Revoke, and the API refuses both", async () => {
    const me = (await call(origin, '/v1/key', { key: provisioningKey })).body.data.id as string;
    const row = page.locator(`[data-testid="key-row"][data-key-id="${me}"]`);
    await expect.poll(() => row.getByTestId('key-self').count()).toBe(1);
    await expect.poll(() => row.getByTestId('key-status').textContent()).toMatch(/active/);
    for (const action of ['key-disable', 'key-revoke']) {
      expect(await row.getByTestId(action).count(), action).toBe(0);
    }
    const revoke = await call(origin, `/v1/keys/${me}`, { method: 'DELETE', key: provisioningKey });
    expect(revoke.status).toBe(400);
    expect((await call(origin, '/v1/key', { key: provisioningKey })).status).toBe(200);
  });

  it('fits a phone-width screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await byTestId('nav-overview').click();
    await expect.poll(() => byTestId('balance').isVisible()).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot('overview-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('signs out, clearing the key from the tab', async () => {
    await byTestId('signout').click();
    await expect.poll(() => byTestId('signin-key').isVisible()).toBe(true);
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
    await page.goto(`${origin}/dashboard/#/keys`);
    await expect.poll(() => byTestId('signin-key').isVisible()).toBe(true);
  });

  it('fetched nothing but its own files and /v1 calls, and broke no CSP rule', () => {
    const seen = requests.filter((r) => !r.url.startsWith(REDIRECT_URI));
    expect(seen.length).toBeGreaterThan(10);
    for (const { url, type } of seen) {
      const { origin: from, pathname } = new URL(url);
      expect(from, url).toBe(origin);
      if (type === 'fetch' || type === 'xhr') expect(pathname, url).toMatch(/^\/v1\//);
      else expect(pathname, url).toMatch(/^\/dashboard(\/|$)/);
    }
    expect(browserErrors.filter((text) => !/status of 40[01]/.test(text))).toEqual([]);
  });
});
