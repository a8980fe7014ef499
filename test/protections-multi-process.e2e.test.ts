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
import { chat, heldOk, ok } from './helpers/routing-gateway.js';

const databaseUrl = process.env.TEST_DATABASE_URL;
const SKIP_REASON = 'TEST_DATABASE_URL is not set';
if (!databaseUrl) console.info(`[e2e] protections-multi-process is skipped: ${SKIP_REASON}`);

/** The rpm of the rate-limited key. */
const RPM = 5;
const UPSTREAM = '/mp/v1/chat/completions';

describe.skipIf(!databaseUrl)(
  `two gateway processes sharing one Postgres${databaseUrl ? '' : ` (skipped: ${SKIP_REASON})`}`,
  () => {
    let db: ScratchDatabase | undefined;
    let config: { path: string; remove(): void } | undefined;
    let mock: MockUpstream | undefined;
    const servers: ServeProcess[] = [];
    let accountId = '';
    let limitedKey = '';
    let roomyKey = '';

    beforeAll(async () => {
      db = await createScratchDatabase(databaseUrl!);
      mock = await new MockUpstream().start();
      config = writeTempConfig(paidModelConfig(mock.url));
      // Provisioned before either server starts (this also migrates the database), through the CLI.
      const common = ['--db', db.url, '--config', config.path];
      accountId = (
        await cliJson(['account', 'create', '--name', 'multi-process', '--credit-usd', '10', ...common])
      ).id!;
      limitedKey = (
        await cliJson([
          'key',
          'create',
          '--account',
          accountId,
          '--name',
          'limited',
          '--rate-limit-rpm',
          String(RPM),
          ...common,
        ])
      ).key!;
      roomyKey = (await cliJson(['key', 'create', '--account', accountId, '--name', 'roomy', ...common]))
        .key!;
      servers.push(...(await Promise.all([0, 1].map(() => startServeProcess(db!.url, config!.path)))));
    }, 90_000);

    afterAll(async () => {
      // SIGTERM to exactly the processes this file started, by their handles.
      await Promise.all(servers.map((s) => s.process.stop('SIGTERM')));
      await mock?.stop();
      config?.remove();
      await db?.drop();
    }, 60_000);

    function chatAt(
      server: ServeProcess,
      key: string,
      headers: Record<string, string> = {},
    ): Promise<ApiResponse> {
      return call(server.url, '/v1/chat/completions', { key, json: chat('acme/paid'), headers });
    }

    async function chargeCount(): Promise<number> {
      const rows = await db!.query<{ n: string }>(
        "SELECT count(*) AS n FROM ledger_entries WHERE account_id = $1 AND kind = 'charge'",
        [accountId],
      );
      return Number(rows[0]!.n);
    }

    it('two processes are up, on different ports, over the same database', async () => {
      expect(servers).toHaveLength(2);
      expect(servers[0]!.url).not.toBe(servers[1]!.url);
      expect(servers[0]!.pid).not.toBe(servers[1]!.pid);
      for (const server of servers) expect((await call(server.url, '/healthz')).status).toBe(200);
    });

    it(`rpm ${RPM}, requests spread over both processes at once → exactly ${RPM} admitted in total`, async () => {
      mock!.reset();
      mock!.setDefault(UPSTREAM, ok('admitted'));
      // Not in the last 15 s of a clock minute, so the burst is counted in one window.
      await vi.waitFor(
        () => {
          if (Date.now() % 60_000 > 45_000) throw new Error('waiting for the next minute to begin');
        },
        { timeout: 20_000, interval: 250 },
      );
      const responses = await Promise.all(
        Array.from({ length: 14 }, (_, i) => chatAt(servers[i % 2]!, limitedKey)),
      );
      const statuses = responses.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 200),
        statuses.join(','),
      ).toHaveLength(RPM);
      expect(
        statuses.filter((s) => s === 429),
        statuses.join(','),
      ).toHaveLength(14 - RPM);
      for (const refused of responses.filter((r) => r.status === 429)) {
        expectError(refused, 429, 'rate_limited');
        expect(refused.headers.get('retry-after') ?? '').toMatch(/^[1-9]\d*$/);
      }
      expect(mock!.received).toHaveLength(RPM);
    });

    it('the same Idempotency-Key sent to both processes at once → one upstream call; the other gets 409, then the replay', async () => {
      mock!.reset();
      mock!.enqueue(UPSTREAM, heldOk('only once'), ok('must not be asked for'));
      const chargesBefore = await chargeCount();
      const key = `mp-${Date.now()}`;
      const settled: ApiResponse[] = [];
      const pending = servers.map((server) =>
        chatAt(server, roomyKey, { 'Idempotency-Key': key }).then((response) => {
          settled.push(response);
          return response;
        }),
      );
      // The upstream holds the first answer: the claimant is upstream, the other one is refused.
      await vi.waitFor(
        () => {
          expect(mock!.received).toHaveLength(1);
          expect(settled).toHaveLength(1);
        },
        { timeout: 15_000, interval: 20 },
      );
      const refused = settled[0]!;
      expectError(refused, 409, 'request_in_flight');
      expect(refused.headers.get('retry-after')).toBe('1');
      mock!.release();
      const [a, b] = await Promise.all(pending);
      const answered = [a!, b!].find((r) => r.status === 200);
      expect(answered, `${a!.status} ${a!.text} / ${b!.status} ${b!.text}`).toBeDefined();
      expect(answered!.body.choices[0].message.content).toBe('only once');
      // The process that said 409 now replays the answer the other process stored.
      const loser = servers[[a, b].indexOf(refused)]!;
      const replay = await chatAt(loser, roomyKey, { 'Idempotency-Key': key });
      expect(replay.status, replay.text).toBe(200);
      expect(replay.headers.get('x-gateway-idempotent-replay')).toBe('true');
      expect(replay.headers.get('x-gateway-request-id')).toBe(answered!.headers.get('x-gateway-request-id'));
      expect(replay.text).toBe(answered!.text);
      expect(mock!.received).toHaveLength(1);
      expect(await chargeCount()).toBe(chargesBefore + 1);
    });

    it('SIGTERM stops both processes cleanly (exit code 0)', async () => {
      const results = await Promise.all(servers.map((s) => s.process.stop('SIGTERM')));
      expect(results.map((r) => r.code)).toEqual([0, 0]);
    });
  },
);
