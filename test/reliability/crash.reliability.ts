import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson } from '../helpers/multi-process-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import {
  chaosConfig,
  type InProcessGateway,
  QuickClock,
  type ServeProcess,
  spawnServe,
  startInProcessGateway,
  writeConfig,
} from './helpers/gateways.js';
import {
  acknowledgedChargesKept,
  balanceMatchesLedger,
  chargesMatchRecords,
  claimsExpiredBy,
  holdsExpiredBy,
  ledgerEntriesKept,
  noClaimLeftInFlight,
  noReservationLeft,
  nothingChargedForFailures,
  readLedger,
  readRecords,
  type Violations,
} from './helpers/invariants.js';
import { type ChatOutcome, runBounded, sendChat, Timings, tallyBy } from './helpers/load.js';
import { dbKinds, lit, num, openDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { Prng, seedFor } from './helpers/seed.js';

/**
 * Crash: a real `tollgate serve` process (the CLI from source) is SIGKILLed in the middle of load,
 * with requests held at the provider (non-streamed with and without Idempotency-Key, and streams
 * cut off after their first bytes reached the client), so the dead process leaves credit holds and
 * in-flight idempotency claims behind. The server is restarted on the same database. Then: no
 * settled entry was lost, the ledger and the balance still agree, and the stranded holds and claims
 * stop counting once their expiry passes (checked at a logical future `now` through the storage
 * API, by a gateway whose clock runs ahead, and by the restarted server after a sweep).
 */

const CREDIT_USD = 100;
const CREDIT_MICROS = CREDIT_USD * 1_000_000;
/** The gateway's default hold TTL (`GatewayOptions.reservationTtlMs`); `tollgate serve` has no option for it. */
const RESERVATION_TTL_MS = 15 * 60_000;
/** Spec: a claim whose process died is released "after about five minutes". */
const CLAIM_TTL_MS = 5 * 60_000;
const HELD_IDEMPOTENT = 6;
const HELD_PLAIN = 4;
const HELD_STREAMS = 4;
const BACKGROUND = 80;

for (const variant of dbKinds) {
  if (variant.skip) console.info(`[reliability] crash on ${variant.kind} is skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `crash: SIGKILL mid-load, restart on the same database [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      const timings = new Timings(`crash [${variant.kind}]`);
      let db: ReliabilityDb;
      let upstream: ChaosUpstream;
      let dir = '';
      let configPath = '';
      let first: ServeProcess | undefined;
      let second: ServeProcess | undefined;
      let accountId = '';
      let key = '';
      let killedAt = 0;
      const before: ChatOutcome[] = [];
      let snapshot: string[] = [];
      const strandedKeys: string[] = [];
      let strandedHolds = 0;
      /** The request ids of the holds the kill stranded: requests cut off mid-flight. */
      let cutOff: string[] = [];
      let strandedClaims = 0;

      beforeAll(async () => {
        const seed = seedFor(`crash [${variant.kind}]`);
        const dice = new Prng(seed);
        db = await openDb(variant.kind);
        upstream = await new ChaosUpstream({ seed, weights: { ok: 8, slow_ok: 3, server_error: 1 } }).start();
        dir = mkdtempSync(join(tmpdir(), 'tollgate-crash-'));
        configPath = writeConfig(dir, chaosConfig(upstream.url));
        const common = ['--db', db.location, '--config', configPath];
        await timings.time('provision through the CLI', async () => {
          accountId = (
            await cliJson([
              'account',
              'create',
              '--name',
              'crash',
              '--credit-usd',
              String(CREDIT_USD),
              ...common,
            ])
          ).id!;
          key = (await cliJson(['key', 'create', '--account', accountId, '--name', 'crash', ...common])).key!;
        });
        first = await timings.time('start server 1', () => spawnServe(db.location, configPath));
        const url = first.url;
        const body = (marker: string, stream: boolean, force?: string) => ({
          model: dice.chance(0.5) ? 'chaos/duo' : 'chaos/solo',
          max_tokens: 300,
          messages: [{ role: 'user', content: `crash load ${marker}` }],
          ...(stream && { stream: true }),
          x_chaos: { id: marker, ...(force && { force }) },
        });

        // Phase 1: load that settles before the crash.
        await timings.time('phase 1: settled load', async () => {
          const run = await runBounded(30, 6, 30_000, (i) =>
            sendChat(
              url,
              key,
              body(`settled-${i}`, i % 3 === 0),
              i % 4 === 1 ? { headers: { 'Idempotency-Key': `done-${seed}-${i}` } } : {},
            ),
          );
          before.push(...run.results.filter((o): o is ChatOutcome => o !== undefined));
        });

        // Phase 2: requests held at the provider (holds and claims in the database), under background load.
        const held: Promise<ChatOutcome>[] = [];
        const streamsStarted = new Set<string>();
        for (let i = 0; i < HELD_IDEMPOTENT; i++) {
          const k = `stranded-${seed}-${i}`;
          strandedKeys.push(k);
          held.push(
            sendChat(url, key, body(`held-idem-${i}`, false, 'hold'), { headers: { 'Idempotency-Key': k } }),
          );
        }
        for (let i = 0; i < HELD_PLAIN; i++)
          held.push(sendChat(url, key, body(`held-plain-${i}`, false, 'hold')));
        for (let i = 0; i < HELD_STREAMS; i++) {
          const marker = `held-stream-${i}`;
          held.push(
            sendChat(url, key, body(marker, true, 'hold_midstream'), {
              onFirstContent: () => streamsStarted.add(marker),
            }),
          );
        }
        let backgroundDone = 0;
        const background = runBounded(BACKGROUND, 8, 60_000, async (i) => {
          const o = await sendChat(url, key, body(`bg-${i}`, i % 2 === 0));
          backgroundDone++;
          before.push(o);
          return o;
        });
        await timings.time('phase 2: wait until held requests are upstream and load is running', async () => {
          await upstream.waitUntil(
            () =>
              upstream.calls.filter((c) => c.marker?.startsWith('held-')).length >=
                HELD_IDEMPOTENT + HELD_PLAIN + HELD_STREAMS &&
              streamsStarted.size === HELD_STREAMS &&
              backgroundDone >= 20,
            30_000,
            'held requests upstream, streams started, background load under way',
          );
        });

        // The crash: SIGKILL to exactly the process this file started.
        snapshot = (await readLedger(db, accountId)).map((e) => e.id);
        killedAt = Date.now();
        const exit = await first.process.stop('SIGKILL');
        console.info(
          `[reliability] crash [${variant.kind}]: SIGKILLed pid ${first.pid} (${exit.signal}) with ${backgroundDone}/${BACKGROUND} background requests done`,
        );
        await Promise.all(held);
        await background;
        const holdsAtKill = await db.storage.listReservations(accountId, killedAt);
        strandedHolds = holdsAtKill.length;
        cutOff = holdsAtKill.map((h) => h.requestId);
        strandedClaims = num(
          (
            await db.query(
              `SELECT count(*) AS n FROM idempotency_claims WHERE account_id = ${lit(accountId)} AND state = 'in_flight'`,
            )
          )[0]?.n,
        );
        second = await timings.time('restart server 2 on the same database', () =>
          spawnServe(db.location, configPath),
        );
        const records = await readRecords(db, accountId);
        console.info(
          `[reliability] crash [${variant.kind}] figures: ${before.length} answers before the kill ` +
            `${JSON.stringify(tallyBy(before, (o) => `${o.status ?? o.kind}`))}; ledger entries at the kill ${snapshot.length}; ` +
            `stranded holds ${strandedHolds}, stranded in-flight claims ${strandedClaims}; records ${records.length}`,
        );
      }, 180_000);

      afterAll(async () => {
        timings.print();
        upstream?.releaseAll();
        await second?.process.stop('SIGTERM');
        await first?.process.stop('SIGKILL');
        await upstream?.stop();
        await db?.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });

      const check = (name: string, fn: () => Promise<Violations> | Violations) =>
        it(name, async () => {
          expect(await timings.time(name, async () => fn())).toEqual([]);
        });

      it('the crash stranded credit holds and in-flight idempotency claims (the scenario is real)', () => {
        expect(strandedHolds).toBeGreaterThanOrEqual(HELD_IDEMPOTENT + HELD_PLAIN + HELD_STREAMS);
        expect(strandedClaims).toBe(HELD_IDEMPOTENT);
        expect(second?.process.running).toBe(true);
      });

      check(
        'every request the kill cut off is on record (in_progress), partly delivered streams included',
        async () => {
          const problems: string[] = [];
          for (const requestId of cutOff) {
            const record = await db.storage.getRequestRecord(accountId, requestId);
            if (record?.status !== 'in_progress')
              problems.push(`${requestId}: ${record?.status ?? 'no record'}`);
          }
          return problems;
        },
      );

      check('no settled entry lost: every ledger entry written before the kill is still there', () =>
        ledgerEntriesKept(db, accountId, snapshot),
      );

      check('every charge a client was answered with before the kill is in the ledger', () =>
        acknowledgedChargesKept(
          db,
          accountId,
          new Map(
            before.flatMap((o) =>
              o.status === 200 && o.requestId && o.shownCostMicros !== null && !o.replay
                ? [[o.requestId, o.shownCostMicros] as [string, number]]
                : [],
            ),
          ),
        ),
      );

      check('every ledger entry has its request record, one charge per charged record', () =>
        chargesMatchRecords(db, accountId),
      );

      check('balance == Σ ledger == credits − Σ charges after the restart', () =>
        balanceMatchesLedger(db, accountId, CREDIT_MICROS),
      );

      check('nothing was charged for refused or failed requests', () =>
        nothingChargedForFailures(db, accountId),
      );

      check(`stranded holds stop counting after their TTL (${RESERVATION_TTL_MS / 60_000} min)`, async () => {
        const holds = await db.storage.listReservations(accountId, killedAt);
        const tooLong = holds
          .filter((h) => h.expiresAt - h.createdAt > RESERVATION_TTL_MS)
          .map((h) => `hold ${h.id} lives ${h.expiresAt - h.createdAt} ms`);
        return [...tooLong, ...(await holdsExpiredBy(db, accountId, killedAt + RESERVATION_TTL_MS + 1))];
      });

      check('a stranded claim answers 409 request_in_flight while it is live', async () => {
        const o = await sendChat(
          second!.url,
          key,
          {
            model: 'chaos/solo',
            messages: [{ role: 'user', content: 'retry of a stranded request' }],
            x_chaos: { id: 'retry-live' },
          },
          { headers: { 'Idempotency-Key': strandedKeys[0]! } },
        );
        return o.status === 409 && o.errorCode === 'request_in_flight'
          ? []
          : [`expected 409 request_in_flight, got ${o.status} ${o.errorCode}`];
      });

      check('stranded claims expire after about five minutes', async () => {
        const rows = await db.query(
          `SELECT created_at, expires_at FROM idempotency_claims WHERE account_id = ${lit(accountId)} AND state = 'in_flight'`,
        );
        const tooLong = rows
          .filter((r) => num(r.expires_at) - num(r.created_at) > CLAIM_TTL_MS + 60_000)
          .map((r) => `a claim lives ${num(r.expires_at) - num(r.created_at)} ms`);
        return [...tooLong, ...(await claimsExpiredBy(db, accountId, killedAt + CLAIM_TTL_MS + 1))];
      });

      it('once expired, a stranded key is served by a gateway whose clock is past the expiry (one upstream call, then a replay)', async () => {
        await timings.time('stranded key after expiry (clock ahead)', async () => {
          let ahead: InProcessGateway | undefined;
          try {
            const clock = new QuickClock(1);
            clock.offsetMs = Date.now() - killedAt + CLAIM_TTL_MS + 1_000;
            ahead = await startInProcessGateway(db.storage, chaosConfig(upstream.url), { clock });
            const request = {
              model: 'chaos/solo',
              messages: [{ role: 'user', content: 'retry after expiry' }],
              x_chaos: { id: 'retry-expired', force: 'ok' },
            };
            const headers = { 'Idempotency-Key': strandedKeys[1]! };
            const first = await sendChat(ahead.url, key, request, { headers });
            const again = await sendChat(ahead.url, key, request, { headers });
            expect([
              ...(first.status === 200 ? [] : [`first retry: ${first.status} ${first.errorCode}`]),
              ...(again.status === 200 && again.replay && again.requestId === first.requestId
                ? []
                : [`second retry: ${again.status} replay=${again.replay}`]),
              ...(upstream.callsFor('retry-expired') === 1
                ? []
                : [`${upstream.callsFor('retry-expired')} upstream calls`]),
            ]).toEqual([]);
          } finally {
            await ahead?.close();
          }
        });
      });

      it('after a sweep at a logical future now, the restarted server serves a stranded key', async () => {
        await timings.time('sweep, then stranded key on server 2', async () => {
          const swept = await db.storage.sweepExpired(killedAt + CLAIM_TTL_MS + 1_000);
          const o = await sendChat(
            second!.url,
            key,
            {
              model: 'chaos/solo',
              messages: [{ role: 'user', content: 'retry after sweep' }],
              x_chaos: { id: 'retry-swept', force: 'ok' },
            },
            { headers: { 'Idempotency-Key': strandedKeys[2]! } },
          );
          expect({
            swept: swept >= HELD_IDEMPOTENT - 1,
            status: o.status,
            calls: upstream.callsFor('retry-swept'),
          }).toEqual({
            swept: true,
            status: 200,
            calls: 1,
          });
        });
      });

      check('no idempotency claim is left in flight after the expiry sweep', () =>
        noClaimLeftInFlight(db, accountId),
      );

      check('sweepExpired at now + 24 h removes every stranded hold', async () => {
        await db.storage.sweepExpired(Date.now() + 24 * 60 * 60_000);
        return [
          ...(await noReservationLeft(db, accountId, Date.now())),
          ...(await chargesMatchRecords(db, accountId)),
          ...(await balanceMatchesLedger(db, accountId, CREDIT_MICROS)),
        ];
      });

      check(
        'the sweep closed every cut-off request as an uncharged internal_error, and none is left in progress',
        async () => {
          const problems: string[] = [];
          for (const requestId of cutOff) {
            const record = await db.storage.getRequestRecord(accountId, requestId);
            if (
              record?.status !== 'error' ||
              record.errorCode !== 'internal_error' ||
              record.costMicros !== 0 ||
              !/stopped before this request finished/.test(record.errorMessage ?? '')
            ) {
              problems.push(
                `${requestId}: ${JSON.stringify(record && { ...record, routingFailures: undefined })}`,
              );
            }
          }
          const open = await db.query(
            `SELECT count(*) AS n FROM request_records WHERE account_id = ${lit(accountId)} AND status = 'in_progress'`,
          );
          if (num(open[0]?.n) !== 0) problems.push(`${num(open[0]?.n)} records still in progress`);
          return problems;
        },
      );
    },
  );
}
