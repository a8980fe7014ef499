import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type ApiResponse, call, expectError } from './helpers/http.js';
import { MockUpstream } from './helpers/mock-upstream.js';
import {
  cliJson,
  createScratchDatabase,
  paidModelConfig,
  type ScratchDatabase,
  type ServeProcess,
  startServeProcess,
  writeTempConfig,
} from './helpers/multi-process-gateway.js';
import { chat, heldOk } from './helpers/routing-gateway.js';

const databaseUrl = process.env.TEST_DATABASE_URL;
const SKIP_REASON = 'TEST_DATABASE_URL is not set';
if (!databaseUrl) console.info(`[e2e] key-limit-windows-multi-process is skipped: ${SKIP_REASON}`);

const UPSTREAM = '/mp/v1/chat/completions';
const REQUESTS = 100;
const ADMITTED = 10;
const BODY = chat('acme/paid', { max_tokens: 10 });

/**
 * A daily key cap is exact across processes (product.md "Windows on key limits"): two `tollgate
 * serve` processes over one Postgres, 100 requests spread over both at once against a daily cap
 * covering exactly 10 worst cases → exactly 10 admitted. The admitted ones are held upstream until
 * the 90 others were refused, so no settle frees room for a late reserve. The servers run on real
 * time: the window is today's (UTC).
 */
describe.skipIf(!databaseUrl)(
  `a daily key cap over two gateway processes sharing one Postgres${databaseUrl ? '' : ` (skipped: ${SKIP_REASON})`}`,
  () => {
    let db: ScratchDatabase | undefined;
    let config: { path: string; remove(): void } | undefined;
    let mock: MockUpstream | undefined;
    const servers: ServeProcess[] = [];
    let common: string[] = [];
    let accountId = '';

    beforeAll(async () => {
      db = await createScratchDatabase(databaseUrl!);
      mock = await new MockUpstream().start();
      config = writeTempConfig(paidModelConfig(mock.url));
      common = ['--db', db.url, '--config', config.path];
      accountId = (await cliJson(['account', 'create', '--name', 'windows', '--credit-usd', '10', ...common]))
        .id!;
      servers.push(...(await Promise.all([0, 1].map(() => startServeProcess(db!.url, config!.path)))));
    }, 90_000);

    afterAll(async () => {
      // SIGTERM to exactly the processes this file started, by their handles.
      await Promise.all(servers.map((s) => s.process.stop('SIGTERM')));
      await mock?.stop();
      config?.remove();
      await db?.drop();
    }, 60_000);

    const createKey = async (...options: string[]) =>
      (await cliJson(['key', 'create', '--account', accountId, '--name', 'k', ...options, ...common])).key!;

    it(`${REQUESTS} requests over both processes at once against a daily cap covering ${ADMITTED} → exactly ${ADMITTED} admitted`, async () => {
      // The worst case of one request, from the refusal of a key capped below it.
      const tiny = await createKey('--spend-limit-usd', '0.000001');
      const probe = await call(servers[0]!.url, '/v1/chat/completions', { key: tiny, json: BODY });
      expectError(probe, 402, 'key_limit_exceeded');
      const worstUsd = /may cost up to \$([0-9]+\.[0-9]+)/.exec(probe.body.error.message)![1]!;
      const worstMicros = Math.round(Number(worstUsd) * 1_000_000);
      const cap = ((ADMITTED * worstMicros) / 1_000_000).toFixed(6);
      const key = await createKey('--spend-limit-usd', cap, '--limit-reset', 'daily');

      mock!.reset();
      mock!.setDefault(UPSTREAM, heldOk('admitted'));
      const refused: ApiResponse[] = [];
      const pending = Array.from({ length: REQUESTS }, (_, i) =>
        call(servers[i % 2]!.url, '/v1/chat/completions', { key, json: BODY }).then((response) => {
          if (response.status !== 200) refused.push(response);
          return response;
        }),
      );
      await vi.waitFor(
        () => {
          expect(refused.length + mock!.received.length).toBeGreaterThanOrEqual(REQUESTS);
        },
        { timeout: 60_000, interval: 50 },
      );
      mock!.release();
      const responses = await Promise.all(pending);
      const statuses = responses.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 200),
        statuses.join(','),
      ).toHaveLength(ADMITTED);
      expect(mock!.received).toHaveLength(ADMITTED);
      expect(refused).toHaveLength(REQUESTS - ADMITTED);
      const tomorrow = new Date(Math.floor(Date.now() / 86_400_000 + 1) * 86_400_000).toISOString();
      for (const refusal of refused) {
        expectError(refusal, 402, 'key_limit_exceeded');
        expect(refusal.body.error.message).toContain(`daily spend limit`);
        expect(refusal.body.error.message).toContain(tomorrow);
      }
      const info = await call(servers[1]!.url, '/v1/key', { key });
      expect(info.body.data).toMatchObject({ limit_reset: 'daily', limit_resets_at: tomorrow });
      expect(info.body.data.usage_daily).toBeGreaterThan(0);
    }, 120_000);
  },
);
