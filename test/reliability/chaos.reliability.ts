import { formatMicrosAsUsd } from '@tollgate/core';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant } from '../helpers/test-gateway.js';
import { ChaosUpstream } from './helpers/chaos-upstream.js';
import {
  CollectingLogger,
  chaosConfig,
  newKey,
  QuickClock,
  startInProcessGateway,
} from './helpers/gateways.js';
import {
  balanceMatchesLedger,
  chargesMatchRecords,
  idempotentGroupsConsistent,
  noClaimLeftInFlight,
  noInternalErrors,
  noReservationLeft,
  nothingChargedForFailures,
  oneRecordPerRequest,
  oneRecordPerSeenRequestId,
  readLedger,
  readRecords,
  shownCostsMatchRecords,
  type Violations,
} from './helpers/invariants.js';
import { type ChatOutcome, runBounded, sendChat, sendChatWithSdk, Timings, tallyBy } from './helpers/load.js';
import { dbKinds, lit, num, openDb, type ReliabilityDb } from './helpers/reliability-db.js';
import { Prng, seedFor } from './helpers/seed.js';

/**
 * Chaos upstream under concurrent load, through the real Node server (in-process, so the gateway
 * runs on a clock whose backoff and Retry-After waits last a few ms). Every upstream attempt is
 * picked by seeded dice: OK JSON, OK SSE (recorded OpenAI wire bytes), 429 with Retry-After 0/1,
 * 500/502/503, a connection reset, a stream cut mid-way, a slow first byte (50–300 ms, against a
 * 250 ms time-to-first-byte limit on one provider), an unreadable 200. Clients mix streamed and
 * non-streamed calls, fetch and the official SDK, Idempotency-Keys with deliberate duplicates,
 * hang-ups mid-stream and hang-ups while the provider thinks. Then each invariant is checked on
 * the database, as its own named check.
 */

const REQUESTS = Number(process.env.RELIABILITY_CHAOS_REQUESTS ?? 300);
const CONCURRENCY = 16;
const LOAD_BUDGET_MS = 90_000;
const CREDIT_MICROS = 50_000_000;
const LIMITED_RPM = 30;

interface Planned {
  index: number;
  marker: string;
  key: 'main' | 'limited';
  model: string;
  badMetadata: boolean;
  stream: boolean;
  idempotencyKey: string | null;
  abort: 'none' | 'after_first_chunk' | 'while_upstream';
  client: 'fetch' | 'sdk';
}

function plan(seed: number, count: number): Planned[] {
  const dice = new Prng(seed);
  const recentKeys: string[] = [];
  const out: Planned[] = [];
  for (let index = 0; index < count; index++) {
    const key = dice.chance(0.2) ? 'limited' : 'main';
    const roll = dice.next();
    const model = roll < 0.02 ? 'chaos/missing' : roll < 0.3 ? 'chaos/solo' : 'chaos/duo';
    const badMetadata = dice.chance(0.03);
    const stream = dice.chance(0.45);
    let idempotencyKey: string | null = null;
    if (!stream && key === 'main' && dice.chance(0.35)) {
      idempotencyKey =
        recentKeys.length > 0 && dice.chance(0.5) ? dice.pick(recentKeys.slice(-6)) : `idem-${seed}-${index}`;
      if (!recentKeys.includes(idempotencyKey)) recentKeys.push(idempotencyKey);
    }
    const abort = stream
      ? dice.chance(0.15)
        ? 'after_first_chunk'
        : 'none'
      : dice.chance(0.04)
        ? 'while_upstream'
        : 'none';
    const client = abort === 'none' && dice.chance(0.25) ? 'sdk' : 'fetch';
    out.push({ index, marker: `m${index}`, key, model, badMetadata, stream, idempotencyKey, abort, client });
  }
  return out;
}

function bodyOf(p: Planned): Record<string, unknown> {
  return {
    model: p.model,
    max_tokens: 400,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: `Request ${p.marker}: say something.` },
    ],
    ...(p.stream && { stream: true }),
    ...(p.badMetadata
      ? { metadata: { nested: { not: 'allowed' } } }
      : { metadata: { run: 'chaos', n: p.index } }),
    x_chaos: { id: p.marker, ...(p.abort === 'while_upstream' && { force: 'hold' }) },
  };
}

for (const variant of dbKinds) {
  if (variant.skip) console.info(`[reliability] chaos on ${variant.kind} is skipped: ${variant.skip}`);
  describe.skipIf(Boolean(variant.skip))(
    `chaos upstream under concurrent load [${variant.kind}]${variant.skip ? ` (skipped: ${variant.skip})` : ''}`,
    () => {
      const timings = new Timings(`chaos [${variant.kind}]`);
      let db: ReliabilityDb;
      let upstream: ChaosUpstream;
      let accountId = '';
      let planned: Planned[] = [];
      let outcomes: { p: Planned; o: ChatOutcome }[] = [];
      let sent = 0;
      const logger = new CollectingLogger();

      beforeAll(async () => {
        const seed = seedFor(`chaos [${variant.kind}]`);
        db = await openDb(variant.kind);
        upstream = await new ChaosUpstream({ seed }).start();
        const clock = new QuickClock(seed);
        const gw = await startInProcessGateway(db.storage, chaosConfig(upstream.url), { clock, logger });
        const tenant = await createTenant(db.storage, { creditMicros: CREDIT_MICROS, name: 'chaos' });
        accountId = tenant.account.id;
        const limited = await newKey(db.storage, accountId, { name: 'limited', rateLimitRpm: LIMITED_RPM });
        const keys = { main: tenant.inferenceKey, limited: limited.secret };
        const sdk = {
          main: new OpenAI({ apiKey: keys.main, baseURL: `${gw.url}/v1`, maxRetries: 0, timeout: 60_000 }),
          limited: new OpenAI({
            apiKey: keys.limited,
            baseURL: `${gw.url}/v1`,
            maxRetries: 0,
            timeout: 60_000,
          }),
        };
        planned = plan(seed, REQUESTS);

        const run = await timings.time(`load: ${REQUESTS} requests, concurrency ${CONCURRENCY}`, () =>
          runBounded(planned.length, CONCURRENCY, LOAD_BUDGET_MS, async (i) => {
            const p = planned[i]!;
            const body = bodyOf(p);
            const headers: Record<string, string> = p.idempotencyKey
              ? { 'Idempotency-Key': p.idempotencyKey }
              : {};
            if (p.client === 'sdk') return sendChatWithSdk(sdk[p.key], body, headers);
            return sendChat(gw.url, keys[p.key], body, {
              headers,
              abortAfterFirstChunk: p.abort === 'after_first_chunk',
              ...(p.abort === 'while_upstream' && {
                abortWhen: upstream
                  .waitUntil(() => upstream.callsFor(p.marker) > 0, 30_000, p.marker)
                  .catch(() => {}),
              }),
            });
          }),
        );
        sent = run.started;
        outcomes = planned.slice(0, sent).map((p) => ({ p, o: run.results[p.index]! }));
        // Quiesce: the server drains what is in flight, then the settles of hung-up streams land.
        await timings.time('drain', async () => {
          await gw.close();
          const deadline = Date.now() + 15_000;
          while (Date.now() < deadline) {
            const rows = await db.query(
              `SELECT count(*) AS n FROM credit_reservations WHERE account_id = ${lit(accountId)}`,
            );
            if (num(rows[0]?.n) === 0) break;
            await new Promise((r) => setTimeout(r, 50));
          }
        });
        const records = await readRecords(db, accountId);
        const ledger = await readLedger(db, accountId);
        const charges = ledger.filter((e) => e.kind === 'charge');
        console.info(
          `[reliability] chaos [${variant.kind}] figures:\n` +
            `  requests sent ${sent} (skipped ${run.skipped}), upstream attempts ${upstream.calls.length}\n` +
            `  upstream outcomes ${JSON.stringify(upstream.tally)}\n` +
            `  client statuses ${JSON.stringify(tallyBy(outcomes, ({ o }) => `${o.status ?? o.kind}${o.errorCode ? `:${o.errorCode}` : ''}`))}\n` +
            `  client kinds ${JSON.stringify(tallyBy(outcomes, ({ o }) => o.kind + (o.sawErrorEvent ? '+error_event' : '') + (o.replay ? '+replay' : '')))}\n` +
            `  records ${records.length} by status ${JSON.stringify(tallyBy(records, (r) => r.status))}\n` +
            `  charges ${charges.length}, Σ ${-charges.reduce((s, e) => s + e.amountMicros, 0)} µ$; backoff waits asked ${clock.asked.length}\n` +
            `  gateway log lines by message ${JSON.stringify(tallyBy(logger.lines, (l) => `${JSON.parse(l).level}: ${JSON.parse(l).msg}`))}`,
        );
      }, 180_000);

      afterAll(async () => {
        timings.print();
        await upstream?.stop();
        await db?.close();
      });

      const check = (name: string, fn: () => Promise<Violations> | Violations) =>
        it(name, async () => {
          const violations = await timings.time(name, async () => fn());
          expect(violations).toEqual([]);
        });

      it('the load ran: every planned request was sent and the chaos hit every failure kind', () => {
        expect(sent).toBe(REQUESTS);
        for (const kind of ['ok', 'slow_ok', 'rate_limited', 'server_error', 'reset', 'break']) {
          expect(upstream.tally[kind] ?? 0, kind).toBeGreaterThan(0);
        }
      });

      check('every request id a client saw has exactly one record', () =>
        oneRecordPerSeenRequestId(
          db,
          accountId,
          outcomes.flatMap(({ o }) => (o.requestId ? [o.requestId] : [])),
        ),
      );

      check('every request left exactly one record (replays and hung-up clients included)', () =>
        oneRecordPerRequest(db, accountId, sent),
      );

      check('every idempotent replay is recorded as a request of its own', async () => {
        const replays = outcomes.filter(({ o }) => o.replay).length;
        const records = await readRecords(db, accountId);
        const recorded = records.filter((r) => r.status === 'replayed').length;
        return recorded === replays
          ? []
          : [`${replays} replays answered, ${recorded} records with status replayed`];
      });

      check('no record write or settle failed (gateway error log)', () =>
        logger.lines.filter((line) => /writing the request record failed|settle failed/.test(line)),
      );

      check('every charged request has exactly one ledger entry, of its recorded cost', () =>
        chargesMatchRecords(db, accountId),
      );

      check('balance == Σ ledger == credits − Σ charges', () =>
        balanceMatchesLedger(db, accountId, CREDIT_MICROS),
      );

      check('nothing is charged for refused or fully failed requests', () =>
        nothingChargedForFailures(
          db,
          accountId,
          outcomes.flatMap(({ o }) =>
            o.status !== null && o.status >= 400 && o.requestId ? [o.requestId] : [],
          ),
        ),
      );

      check('no credit reservation is left behind', () => noReservationLeft(db, accountId, Date.now()));

      check('no idempotency claim is left in flight', () => noClaimLeftInFlight(db, accountId));

      const shown = () => outcomes.map(({ p, o }) => ({ label: p.marker, ...o }));

      check('every cost shown to a client is the cost on record', () =>
        shownCostsMatchRecords(db, accountId, shown(), formatMicrosAsUsd),
      );

      check('no answer is an internal error or a dropped connection', () =>
        noInternalErrors(
          // The SDK reports a broken stream as an error, not as `[DONE]`: its streams are not held to it.
          outcomes.map(({ p, o }) => ({
            label: p.marker,
            ...o,
            done: p.client === 'sdk' ? undefined : o.done,
          })),
          [200, 400, 404, 409, 429, 502, 504],
        ),
      );

      check('idempotent duplicates: one answer per key, charged at most once', () => {
        const groups = new Map<string, ChatOutcome[]>();
        for (const { p, o } of outcomes) {
          if (p.idempotencyKey) groups.set(p.idempotencyKey, [...(groups.get(p.idempotencyKey) ?? []), o]);
        }
        return idempotentGroupsConsistent(
          db,
          accountId,
          new Map([...groups].map(([k, g]) => [k, g.map((o) => ({ label: k, ...o }))])),
        );
      });
    },
  );
}
