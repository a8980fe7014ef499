import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import { chaosConfig, newKey, type ServeProcess, spawnServe, writeConfig } from './helpers/gateways.js';
import {
  balanceMatchesLedger,
  chargesMatchRecords,
  exactly,
  noClaimLeftInFlight,
  noReservationLeft,
  nothingChargedForFailures,
  readLedger,
  readRecords,
  type Violations,
} from './helpers/invariants.js';
import { type ChatOutcome, runBounded, sendChat, Timings, tallyBy } from './helpers/load.js';
import { openPostgresDb, type ReliabilityDb, TEST_DATABASE_URL } from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * Two `tollgate serve` processes on one freshly created Postgres database (dropped at the end),
 * under background load through both: a key's rpm limit is exact across them, and one
 * Idempotency-Key sent to both at once reaches the provider exactly once.
 */

const SKIP = TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set';
if (SKIP) console.info(`[reliability] multi-process is skipped: ${SKIP}`);

const RPM = 25;
const RPM_BURST = 120;
const IDEMPOTENCY_KEYS = 20;
const COPIES_PER_PROCESS = 3;
const CREDIT_MICROS = 100_000_000;

describe.skipIf(Boolean(SKIP))(
  `two gateway processes on one Postgres under load${SKIP ? ` (skipped: ${SKIP})` : ''}`,
  () => {
    const timings = new Timings('multi-process');
    let db: ReliabilityDb;
    let upstream: ChaosUpstream;
    let dir = '';
    const servers: ServeProcess[] = [];
    let accountId = '';
    let roomyKey = '';
    let seed = 0;
    let background: Promise<unknown> | undefined;
    let stopBackground = false;
    const backgroundOutcomes: ChatOutcome[] = [];
    const allOutcomes: ChatOutcome[] = [];

    beforeAll(async () => {
      seed = seedFor('multi-process');
      db = await openPostgresDb(TEST_DATABASE_URL!);
      upstream = await new ChaosUpstream({ seed, weights: { slow_ok: 1 }, slowMs: [100, 300] }).start();
      dir = mkdtempSync(join(tmpdir(), 'tollgate-mp-'));
      const config = writeConfig(dir, chaosConfig(upstream.url));
      const tenant = await createTenant(db.storage, { creditMicros: CREDIT_MICROS, name: 'multi-process' });
      accountId = tenant.account.id;
      roomyKey = tenant.inferenceKey;
      servers.push(
        ...(await timings.time('start two servers', () =>
          Promise.all([spawnServe(db.location, config), spawnServe(db.location, config)]),
        )),
      );
      // Background load through both processes for as long as the checks run (bounded in count and time).
      background = runBounded(400, 8, 60_000, async (i) => {
        if (stopBackground) return undefined;
        const o = await sendChat(servers[i % 2]!.url, roomyKey, {
          model: 'chaos/duo',
          max_tokens: 100,
          messages: [{ role: 'user', content: `background ${i}` }],
          ...(i % 3 === 0 && { stream: true }),
          x_chaos: { id: `bg-${i}` },
        });
        backgroundOutcomes.push(o);
        return o;
      });
    }, 120_000);

    afterAll(async () => {
      stopBackground = true;
      await background;
      timings.print();
      await Promise.all(servers.map((s) => s.process.stop('SIGTERM')));
      await upstream?.stop();
      await db?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it('two processes, two pids, one database', () => {
      expect(servers).toHaveLength(2);
      expect(servers[0]!.pid).not.toBe(servers[1]!.pid);
      expect(servers.every((s) => s.process.running)).toBe(true);
    });

    it(`rpm ${RPM}: ${RPM_BURST} concurrent requests spread over both processes → exactly ${RPM} admitted`, async () => {
      await timings.time('rpm burst', async () => {
        const limited = await newKey(db.storage, accountId, { name: 'rpm', rateLimitRpm: RPM });
        // The burst must fall inside one clock minute: the sliding window weighs the previous minute in.
        const deadline = Date.now() + 15_000;
        while (Date.now() % 60_000 > 48_000 && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 200));
        const run = await runBounded(RPM_BURST, 24, 30_000, (i) =>
          sendChat(servers[i % 2]!.url, limited.secret, {
            model: 'chaos/solo',
            max_tokens: 50,
            messages: [{ role: 'user', content: `rpm ${i}` }],
            x_chaos: { id: `rpm-${i}` },
          }),
        );
        const outcomes = run.results.filter((o): o is ChatOutcome => o !== undefined);
        allOutcomes.push(...outcomes);
        const upstreamCalls = upstream.calls.filter((c) => c.marker?.startsWith('rpm-')).length;
        const refused = (await readRecords(db, accountId)).filter(
          (r) => r.errorCode === 'rate_limited' && outcomes.some((o) => o.requestId === r.id),
        ).length;
        console.info(
          `[reliability] multi-process rpm: ${JSON.stringify(tallyBy(outcomes, (o) => `${o.status}${o.errorCode ? `:${o.errorCode}` : ''}`))}, upstream calls ${upstreamCalls}`,
        );
        expect([
          ...exactly('requests sent', outcomes.length, RPM_BURST),
          ...exactly('admitted (200)', outcomes.filter((o) => o.status === 200).length, RPM),
          ...exactly(
            'refused 429 rate_limited',
            outcomes.filter((o) => o.errorCode === 'rate_limited').length,
            RPM_BURST - RPM,
          ),
          ...exactly('upstream calls', upstreamCalls, RPM),
          ...exactly('refusals recorded as rate_limited', refused, RPM_BURST - RPM),
        ]).toEqual([]);
      });
    });

    it(`one Idempotency-Key sent ${2 * COPIES_PER_PROCESS}× at once to both processes → exactly one upstream call (${IDEMPOTENCY_KEYS} keys)`, async () => {
      await timings.time('idempotency burst', async () => {
        const keys = Array.from({ length: IDEMPOTENCY_KEYS }, (_, k) => `mp-${seed}-${k}`);
        const send = (k: number, server: ServeProcess) =>
          sendChat(
            server.url,
            roomyKey,
            {
              model: 'chaos/solo',
              max_tokens: 50,
              messages: [{ role: 'user', content: `idempotent ${k}` }],
              x_chaos: { id: `idem-${k}` },
            },
            { headers: { 'Idempotency-Key': keys[k]! } },
          );
        const burst = await Promise.all(
          keys.flatMap((_, k) =>
            Array.from({ length: 2 * COPIES_PER_PROCESS }, (_, c) =>
              send(k, servers[c % 2]!).then((o) => ({ k, o })),
            ),
          ),
        );
        const again = await Promise.all(keys.map((_, k) => send(k, servers[k % 2]!).then((o) => ({ k, o }))));
        allOutcomes.push(...burst.map(({ o }) => o), ...again.map(({ o }) => o));
        const records = new Map((await readRecords(db, accountId)).map((r) => [r.id, r]));
        const charges = (await readLedger(db, accountId)).filter((e) => e.kind === 'charge');
        const violations: Violations = [];
        for (let k = 0; k < IDEMPOTENCY_KEYS; k++) {
          const mine = burst.filter((b) => b.k === k).map((b) => b.o);
          const answered = new Set(mine.filter((o) => o.status === 200).map((o) => o.requestId));
          const other = mine.filter((o) => o.status !== 200 && o.errorCode !== 'request_in_flight');
          const replay = again.find((a) => a.k === k)!.o;
          const original = [...answered][0];
          violations.push(
            ...exactly(`key ${k}: upstream calls`, upstream.callsFor(`idem-${k}`), 1),
            ...exactly(`key ${k}: distinct answers`, answered.size, 1),
            ...other.map((o) => `key ${k}: unexpected ${o.status} ${o.errorCode}`),
            ...(replay.status === 200 && replay.replay && replay.requestId === original
              ? []
              : [
                  `key ${k}: the later retry got ${replay.status} replay=${replay.replay} id=${replay.requestId}`,
                ]),
            ...exactly(
              `key ${k}: charges`,
              charges.filter((e) => e.requestId === original).length,
              (records.get(original ?? '')?.costMicros ?? 0) > 0 ? 1 : 0,
            ),
          );
        }
        console.info(
          `[reliability] multi-process idempotency: ${JSON.stringify(tallyBy(burst, ({ o }) => `${o.status}${o.errorCode ? `:${o.errorCode}` : ''}${o.replay ? ':replay' : ''}`))}`,
        );
        expect(violations).toEqual([]);
      });
    });

    it('after the load: charges ↔ records, balance == Σ ledger, nothing charged for refusals, no hold or claim left', async () => {
      stopBackground = true;
      await background;
      console.info(
        `[reliability] multi-process background: ${backgroundOutcomes.length} requests ${JSON.stringify(tallyBy(backgroundOutcomes, (o) => `${o.status}`))}`,
      );
      const failed = [...allOutcomes, ...backgroundOutcomes].flatMap((o) =>
        o.status !== null && o.status >= 400 && o.requestId ? [o.requestId] : [],
      );
      expect([
        ...(await chargesMatchRecords(db, accountId)),
        ...(await balanceMatchesLedger(db, accountId, CREDIT_MICROS)),
        ...(await nothingChargedForFailures(db, accountId, failed)),
        ...(await noReservationLeft(db, accountId, Date.now())),
        ...(await noClaimLeftInFlight(db, accountId)),
      ]).toEqual([]);
    });
  },
);
