import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import {
  answered2xx,
  type BatchView,
  batchItemMetrics,
  countsMatchLines,
  createChatBatch,
  finishedHere,
  itemStates,
  itemsChargedOnce,
  lineKind,
  logLines,
  oneLinePerItem,
  pollBatch,
  type ResultLine,
  readResults,
} from './helpers/batches.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import { chaosConfig, type ServeProcess, spawnServe, writeConfig } from './helpers/gateways.js';
import {
  balanceMatchesLedger,
  chargesMatchRecords,
  exactly,
  holdsExpiredBy,
  noErrorLogLines,
  noReservationLeft,
  nothingChargedForFailures,
  readRecords,
  type Violations,
} from './helpers/invariants.js';
import { Timings, tallyBy } from './helpers/load.js';
import {
  dbKinds,
  lit,
  num,
  openDb,
  openPostgresDb,
  type ReliabilityDb,
  TEST_DATABASE_URL,
} from './helpers/reliability-db.js';
import { seedFor } from './helpers/seed.js';

/**
 * Batches under crashes and across processes. A batch's items are claimed with a lease in storage
 * and each runs as a metered request of its own (own request id, record, charge), so:
 * - a `tollgate serve` SIGKILLed mid-batch and restarted on the same database finishes the batch,
 *   and no item is charged twice (an item whose lease expired is looked up by its request id before
 *   it runs again);
 * - two `tollgate serve` processes on one Postgres share one batch, and no item completes twice.
 * Every check reads the results NDJSON and the database underneath (raw SQL).
 */

const CREDIT_MICROS = 100_000_000;
/** The gateway's default hold TTL (`GatewayOptions.reservationTtlMs`); `tollgate serve` has no option for it. */
const RESERVATION_TTL_MS = 15 * 60_000;
const CRASH_ITEMS = 300;
const CRASH_LEASE_MS = 2_000;
const CONCURRENCY = 8;
/** The crash happens once at least this many items are finished (and while others run). */
const KILL_AFTER = 40;
const SHARED_ITEMS = 2_000;

/** A small chat item; `x_chaos.id` lets the upstream count the calls each item made. */
const chatItem = (prefix: string, i: number) => ({
  custom_id: `${prefix}-${i}`,
  body: {
    model: 'chaos/solo',
    max_tokens: 50,
    messages: [{ role: 'user', content: `batch item ${i}` }],
    x_chaos: { id: `${prefix}-${i}` },
  },
});

/** The checks of a finished batch: counts, one line per item, one record and one charge per item. */
function finishedBatchChecks(
  label: string,
  state: () => {
    db: ReliabilityDb;
    accountId: string;
    batch: BatchView | undefined;
    lines: ResultLine[];
    customIds: string[];
  },
  timings: Timings,
) {
  const check = (name: string, fn: () => Promise<Violations> | Violations) =>
    it(name, async () => {
      expect(await timings.time(name, async () => fn())).toEqual([]);
    });

  check('the batch completed: status completed, request_counts.completed + failed == total', () => {
    const { batch, customIds } = state();
    if (!batch) return ['the batch never completed'];
    return [
      ...exactly('status completed', batch.status === 'completed' ? 1 : 0, 1),
      ...exactly('request_counts.total', batch.request_counts.total, customIds.length),
      ...exactly(
        'request_counts.completed + failed',
        batch.request_counts.completed + batch.request_counts.failed,
        customIds.length,
      ),
    ];
  });

  check('no item queued or running is left underneath (batch_items)', async () => {
    const { db, batch } = state();
    const states = await itemStates(db, batch?.id ?? '');
    return [
      ...((states.queued ?? 0) > 0 ? [`${states.queued} items queued`] : []),
      ...((states.running ?? 0) > 0 ? [`${states.running} items running`] : []),
    ];
  });

  check(
    'the results hold exactly one line per item: each custom_id once, ids unique, id == response.request_id',
    () => oneLinePerItem(state().lines, state().customIds),
  );

  check('request_counts agree with the lines (completed = answered 2xx, failed = the others)', () => {
    const { batch, lines } = state();
    return batch ? countsMatchLines(batch, lines) : ['the batch never completed'];
  });

  check(
    'every item has exactly one request record; every item answered 2xx exactly one charge of its record cost',
    async () => {
      const { db, accountId, lines } = state();
      const { violations, chargedMicros, recordCostMicros } = await itemsChargedOnce(db, accountId, lines);
      console.info(
        `[reliability] ${label}: Σ charges of the items ${chargedMicros} µ$, Σ their record costs ${recordCostMicros} µ$`,
      );
      return violations;
    },
  );

  check(
    'the account has one record per item and no other (no item ran under a second request id)',
    async () => {
      const { db, accountId, customIds } = state();
      const records = await readRecords(db, accountId);
      return exactly('request records of the account', records.length, customIds.length);
    },
  );

  check(
    'charges ↔ records; balance == Σ ledger == credits − Σ charges; nothing charged for failures',
    async () => {
      const { db, accountId, lines } = state();
      const failed = lines.filter((l) => l.response !== null && !answered2xx(l)).map((l) => l.id);
      return [
        ...(await chargesMatchRecords(db, accountId)),
        ...(await balanceMatchesLedger(db, accountId, CREDIT_MICROS)),
        ...(await nothingChargedForFailures(db, accountId, failed)),
      ];
    },
  );
}

for (const variant of dbKinds) {
  if (variant.skip)
    console.info(`[reliability] batches crash on ${variant.kind} is skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `batches: SIGKILL mid-batch, restart on the same database [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      const label = `batches crash [${variant.kind}]`;
      const timings = new Timings(label);
      let db: ReliabilityDb;
      let upstream: ChaosUpstream;
      let dir = '';
      let first: ServeProcess | undefined;
      let second: ServeProcess | undefined;
      let accountId = '';
      let key = '';
      let batchId = '';
      let killedAt = 0;
      let atKill: { completed: number; failed: number } | null = null;
      let statesAtKill: Record<string, number> = {};
      let strandedHolds: string[] = [];
      let batch: BatchView | undefined;
      let lines: ResultLine[] = [];
      const customIds = Array.from({ length: CRASH_ITEMS }, (_, i) => chatItem('item', i).custom_id);

      beforeAll(async () => {
        const seed = seedFor(label);
        db = await openDb(variant.kind);
        // Every call answers, after 40–120 ms: the batch takes a few seconds at concurrency 8.
        upstream = await new ChaosUpstream({ seed, weights: { slow_ok: 1 }, slowMs: [40, 120] }).start();
        dir = mkdtempSync(join(tmpdir(), 'tollgate-batch-crash-'));
        const config = writeConfig(
          dir,
          chaosConfig(upstream.url, { batches: { concurrency: CONCURRENCY, lease_ms: CRASH_LEASE_MS } }),
        );
        const tenant = await createTenant(db.storage, { creditMicros: CREDIT_MICROS, name: 'batch-crash' });
        accountId = tenant.account.id;
        key = tenant.inferenceKey;
        first = await timings.time('start server 1', () => spawnServe(db.location, config));
        const created = await timings.time(`POST a ${CRASH_ITEMS}-item batch`, () =>
          createChatBatch(
            first!.url,
            key,
            Array.from({ length: CRASH_ITEMS }, (_, i) => chatItem('item', i)),
          ),
        );
        batchId = created.id;
        await timings.time(`wait until ${KILL_AFTER} items are finished`, () =>
          pollBatch(
            first!.url,
            key,
            batchId,
            (b) => b.request_counts.completed + b.request_counts.failed >= KILL_AFTER,
            { timeoutMs: 60_000, intervalMs: 50, what: `${KILL_AFTER} finished items` },
          ),
        );

        // The crash: SIGKILL to exactly the process this file started, items in flight.
        killedAt = Date.now();
        const exit = await first.process.stop('SIGKILL');
        atKill = await db.storage.getBatch(accountId, batchId);
        statesAtKill = await itemStates(db, batchId);
        strandedHolds = (await db.storage.listReservations(accountId, killedAt)).map((h) => h.requestId);
        const inProgress = await db.query(
          `SELECT count(*) AS n FROM request_records WHERE account_id = ${lit(accountId)} AND status = 'in_progress'`,
        );
        console.info(
          `[reliability] ${label}: SIGKILLed pid ${first.pid} (${exit.signal}); items by state at the kill ` +
            `${JSON.stringify(statesAtKill)}; live holds stranded ${strandedHolds.length}; in_progress records ` +
            `${num(inProgress[0]?.n)}; upstream calls so far ${upstream.calls.length}`,
        );

        second = await timings.time('restart server 2 on the same database', () =>
          spawnServe(db.location, config),
        );
        batch = (
          await timings.time('wait until the batch is completed', () =>
            pollBatch(second!.url, key, batchId, (b) => b.status === 'completed', {
              timeoutMs: 120_000,
              intervalMs: 200,
              what: 'status completed',
            }),
          )
        ).batch;
        lines = await readResults(second.url, key, batchId);
        const twice = customIds.filter((id) => upstream.callsFor(id) > 1);
        const lost = lines.filter((l) => l.error?.code === 'result_lost');
        const again = logLines(second.output(), /claimed again/);
        const errorLines = noErrorLogLines('server 2', second.output());
        console.info(
          `[reliability] ${label} figures: counts ${JSON.stringify(batch.request_counts)}; lines by status ` +
            `${JSON.stringify(tallyBy(lines, lineKind))}; ` +
            `result_lost lines ${lost.length}; items claimed again after the kill ${again.length}; ` +
            `items that reached the upstream twice ${twice.length}; upstream calls ${upstream.calls.length} for ${CRASH_ITEMS} items; ` +
            `error-level log lines of server 2: ${errorLines.length}${errorLines.length ? `, the first: ${errorLines[0]}` : ''}`,
        );
      }, 240_000);

      afterAll(async () => {
        timings.print();
        await second?.process.stop('SIGTERM');
        await first?.process.stop('SIGKILL');
        await upstream?.stop();
        await db?.close();
        if (dir) rmSync(dir, { recursive: true, force: true });
      }, 60_000);

      it('the kill happened mid-batch: items finished, items in flight and items queued at the kill', () => {
        expect({
          finished: (atKill?.completed ?? 0) + (atKill?.failed ?? 0) >= KILL_AFTER,
          unfinished: (statesAtKill.queued ?? 0) + (statesAtKill.running ?? 0) > 0,
          restarted: second?.process.running,
        }).toEqual({ finished: true, unfinished: true, restarted: true });
      });

      finishedBatchChecks(label, () => ({ db, accountId, batch, lines, customIds }), timings);

      // Spec: "an item whose process died is run again within that time after a restart". The
      // upstream here always answers, so every item must end answered 2xx, those cut off by the kill
      // (claimed again under their request id) included, and the restarted server log no error.
      it('every item completed: the items the kill cut off mid-request were run again (failed == 0)', () => {
        expect(
          lines.filter((l) => !answered2xx(l)).map((l) => `${l.custom_id} (${l.id}): ${lineKind(l)}`),
        ).toEqual([]);
      });

      it('the restarted server logged nothing at error level while finishing the batch', () => {
        expect(noErrorLogLines('server 2', second?.output() ?? '')).toEqual([]);
      });

      it('result_lost lines (settled just before the kill, answer not kept) are answered 2xx and charged exactly once', async () => {
        const lost = lines.filter((l) => l.error?.code === 'result_lost');
        console.info(`[reliability] ${label}: ${lost.length} result_lost line(s)`);
        const charges = await db.query(
          `SELECT request_id, count(*) AS n FROM ledger_entries WHERE account_id = ${lit(accountId)} AND kind = 'charge' GROUP BY request_id`,
        );
        const perId = new Map(charges.map((r) => [String(r.request_id), num(r.n)]));
        expect(
          lost.flatMap((l) => [
            ...(l.response && l.response.status_code < 300
              ? []
              : [`${l.custom_id}: ${l.response?.status_code}`]),
            ...exactly(`${l.custom_id} charges`, perId.get(l.id) ?? 0, 1),
          ]),
        ).toEqual([]);
      });

      it(`holds stranded by the kill expire by their TTL (${RESERVATION_TTL_MS / 60_000} min), and after the sweep at kill + TTL none is left`, async () => {
        await timings.time('holds after TTL and sweep', async () => {
          const holds = await db.storage.listReservations(accountId, killedAt);
          const tooLong = holds
            .filter((h) => h.expiresAt - h.createdAt > RESERVATION_TTL_MS)
            .map((h) => `hold ${h.id} lives ${h.expiresAt - h.createdAt} ms`);
          const expired = await holdsExpiredBy(db, accountId, killedAt + RESERVATION_TTL_MS + 1);
          await db.storage.sweepExpired(killedAt + RESERVATION_TTL_MS + 1);
          const open = await db.query(
            `SELECT count(*) AS n FROM request_records WHERE account_id = ${lit(accountId)} AND status = 'in_progress'`,
          );
          expect([
            ...tooLong,
            ...expired,
            ...(await noReservationLeft(db, accountId, Date.now())),
            ...exactly('records left in_progress after the sweep', num(open[0]?.n), 0),
            // The sweep closes only what no live hold covers: the ledger must not move.
            ...(await chargesMatchRecords(db, accountId)),
            ...(await balanceMatchesLedger(db, accountId, CREDIT_MICROS)),
            ...(await itemsChargedOnce(db, accountId, lines)).violations,
          ]).toEqual([]);
        });
      });
    },
  );
}

const PG_SKIP = TEST_DATABASE_URL ? null : 'TEST_DATABASE_URL is not set';
if (PG_SKIP) console.info(`[reliability] batches on two processes is skipped: ${PG_SKIP}`);

describe.skipIf(Boolean(PG_SKIP))(
  `batches: two gateway processes on one Postgres work one ${SHARED_ITEMS}-item batch${PG_SKIP ? ` (skipped: ${PG_SKIP})` : ''}`,
  () => {
    const label = 'batches two processes [postgres]';
    const timings = new Timings(label);
    let db: ReliabilityDb;
    let upstream: ChaosUpstream;
    let dir = '';
    const servers: ServeProcess[] = [];
    let accountId = '';
    let key = '';
    let batchId = '';
    let batch: BatchView | undefined;
    let lines: ResultLine[] = [];
    const ran: number[] = [];
    let metrics: Record<string, number> = {};
    const customIds = Array.from({ length: SHARED_ITEMS }, (_, i) => chatItem('shared', i).custom_id);

    beforeAll(async () => {
      const seed = seedFor(label);
      db = await openPostgresDb(TEST_DATABASE_URL!);
      upstream = await new ChaosUpstream({ seed, weights: { ok: 1, slow_ok: 1 }, slowMs: [5, 30] }).start();
      dir = mkdtempSync(join(tmpdir(), 'tollgate-batch-mp-'));
      const config = writeConfig(
        dir,
        chaosConfig(upstream.url, { batches: { concurrency: CONCURRENCY, lease_ms: 5_000 } }),
      );
      const tenant = await createTenant(db.storage, { creditMicros: CREDIT_MICROS, name: 'batch-mp' });
      accountId = tenant.account.id;
      key = tenant.inferenceKey;
      servers.push(
        ...(await timings.time('start two servers', () =>
          Promise.all([spawnServe(db.location, config), spawnServe(db.location, config)]),
        )),
      );
      batchId = (
        await timings.time(`POST a ${SHARED_ITEMS}-item batch to server 1`, () =>
          createChatBatch(
            servers[0]!.url,
            key,
            Array.from({ length: SHARED_ITEMS }, (_, i) => chatItem('shared', i)),
          ),
        )
      ).id;
      batch = (
        await timings.time('wait until the batch is completed (polling server 2)', () =>
          pollBatch(servers[1]!.url, key, batchId, (b) => b.status === 'completed', {
            timeoutMs: 180_000,
            intervalMs: 250,
            what: 'status completed',
          }),
        )
      ).batch;
      lines = await readResults(servers[1]!.url, key, batchId);
      metrics = await batchItemMetrics(servers[0]!.url);
      // The progress line of a batch comes when a worker next finds nothing to claim: bounded wait.
      const deadline = Date.now() + 10_000;
      while (
        servers.reduce((sum, s) => sum + finishedHere(s.output(), batchId), 0) < SHARED_ITEMS &&
        Date.now() < deadline
      ) {
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      ran.push(...servers.map((s) => finishedHere(s.output(), batchId)));
      console.info(
        `[reliability] ${label} figures: counts ${JSON.stringify(batch.request_counts)}; items finished by ` +
          `process (from their logs) ${ran.join(' + ')}; tollgate_batch_items ${JSON.stringify(metrics)}; ` +
          `upstream calls ${upstream.calls.length}; lines by status ${JSON.stringify(tallyBy(lines, lineKind))}`,
      );
    }, 240_000);

    afterAll(async () => {
      timings.print();
      await Promise.all(servers.map((s) => s.process.stop('SIGTERM')));
      await upstream?.stop();
      await db?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }, 60_000);

    it('both processes ran items of the batch (their logs), and together exactly one finish per item', () => {
      expect({
        bothRan: ran.length === 2 && ran.every((n) => n > 0),
        finishedInAll: ran.reduce((a, b) => a + b, 0),
      }).toEqual({ bothRan: true, finishedInAll: SHARED_ITEMS });
    });

    it('every item reached the upstream exactly once (no item ran twice)', () => {
      const twice = customIds.filter((id) => upstream.callsFor(id) !== 1);
      expect(twice.map((id) => `${id}: ${upstream.callsFor(id)} upstream calls`)).toEqual([]);
    });

    it('/metrics tollgate_batch_items: every item completed or failed, none queued or running', () => {
      expect({
        finished: (metrics.completed ?? 0) + (metrics.failed ?? 0),
        queued: metrics.queued ?? 0,
        running: metrics.running ?? 0,
      }).toEqual({ finished: SHARED_ITEMS, queued: 0, running: 0 });
    });

    finishedBatchChecks(label, () => ({ db, accountId, batch, lines, customIds }), timings);

    it('no hold is left, and neither server logged at error level', async () => {
      expect([
        ...(await noReservationLeft(db, accountId, Date.now())),
        ...servers.flatMap((s, i) => noErrorLogLines(`server ${i + 1}`, s.output())),
      ]).toEqual([]);
    });
  },
);
