import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { newId, type Storage } from '@tollgate/core';
import { meteredAccount, requestRecord } from '@tollgate/core/testing';
import { createPostgresStorage } from '@tollgate/storage-postgres';
import pg from 'pg';
import { cpuMsOf } from './cpu.js';
import { quantile, sorted } from './stats.js';

/*
 * The Postgres metering statement in isolation, without the gateway, the mock or the load
 * generator: what one batch costs the server, by batch size, steady enough (4–7 % here) to judge a
 * change to the SQL, where a `bench:ab` round moves by up to 1.8 ×.
 *
 * One storage per variant with ONE pooled connection (one backend to read the CPU of), on a schema
 * of its own. A round makes N requests: the N reserves of this round, each with its rate-limit hit,
 * and the N settles of the previous round's requests, all in one turn, so the queue sends them as
 * ONE `tollgate_meter_batch_with_hits` statement, as a busy gateway's turn does. Per batch size and
 * variant it reports the client's wall time per statement (median: the round trip, the commit's WAL
 * flush included) and the backend's CPU per statement (from /proc: the server must run on this
 * machine, else "-"). Rounds run in blocks that alternate between variants, so that the machine's
 * drift falls on each alike; every batch size starts on fresh schemas, whose plan caches have seen
 * only that size (Postgres picks custom or generic plans from what a statement has seen). /proc counts
 * CPU in 10 ms ticks: the default 800 rounds give each variant ~1 s of backend CPU at N = 1, and two
 * identical variants agreed within 4–7 %; fewer rounds are coarser (200 rounds: 15 % apart).
 *
 * A variant is `name=` (the schema as migrated) or `name=SQL`, statements run on its schema once
 * migrated, e.g. `generic=ALTER FUNCTION tollgate_meter_batch_with_hits(jsonb, jsonb, jsonb) SET
 * plan_cache_mode = force_generic_plan`.
 */

const USAGE = `Usage: node --import tsx bench/meter-batch.ts [--sizes 1,4,16] [--rounds N] [--blocks N] [--postgres-url URL]
       NAME=[SQL] NAME=[SQL] …
Runs after \`npm run build\`; needs a Postgres server (default postgres://postgres@127.0.0.1:5432/test).`;

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    sizes: { type: 'string', default: '1,4,16' },
    rounds: { type: 'string', default: '800' },
    blocks: { type: 'string', default: '8' },
    'postgres-url': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
/** `name=` or `name=SQL`; null when the argument has no name. */
function parseVariant(arg: string): { name: string; sql: string } | null {
  const at = arg.indexOf('=');
  return at < 1 ? null : { name: arg.slice(0, at), sql: arg.slice(at + 1) };
}
const parsed = positionals.map(parseVariant);
const variants = parsed.filter((v) => v !== null);
const sizes = String(opts.sizes).split(',').map(Number);
const rounds = Number(opts.rounds);
const blocks = Number(opts.blocks);
if (
  opts.help ||
  variants.length === 0 ||
  variants.length !== parsed.length ||
  !sizes.every((n) => Number.isInteger(n) && n >= 1 && n <= 32) ||
  !(rounds >= blocks && blocks >= 1)
) {
  console.log(USAGE);
  process.exit(opts.help ? 0 : 2);
}
const postgresUrl =
  opts['postgres-url'] ?? process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
/** Rounds each variant runs before it is measured: past Postgres's five custom plans, into steady state. */
const WARM_UP_ROUNDS = 100;

/** One variant on its own schema: a storage with one connection, and its backend's pid. */
interface Subject {
  name: string;
  storage: Storage;
  schema: string;
  backendPid: number;
  round(n: number): Promise<number>;
}

async function openSubject(name: string, sql: string, admin: pg.Client): Promise<Subject> {
  const schema = `tollgate_meter_batch_${randomBytes(5).toString('hex')}`;
  const url = new URL(postgresUrl);
  url.searchParams.set('application_name', schema);
  const storage = await createPostgresStorage({ connectionString: url.toString(), schema, poolSize: 1 });
  try {
    return await prepareSubject(name, sql, admin, storage, schema);
  } catch (error) {
    await storage.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    throw error;
  }
}

async function prepareSubject(
  name: string,
  sql: string,
  admin: pg.Client,
  storage: Storage,
  schema: string,
): Promise<Subject> {
  const { account, key } = await meteredAccount(storage, {
    balanceMicros: 1_000_000_000_000,
    spendLimitMicros: 1_000_000_000_000,
    name: 'meter batch bench',
  });
  if (sql.trim() !== '') {
    await admin.query(`SET search_path TO ${schema}`);
    await admin.query(sql);
    await admin.query('RESET search_path');
  }
  let unsettled: { record: ReturnType<typeof requestRecord>; reservationId: string }[] = [];
  const round = async (n: number): Promise<number> => {
    const records = Array.from({ length: n }, () =>
      requestRecord(account.id, { id: newId('gen'), keyId: key.id, costMicros: 1_234 }),
    );
    const started = performance.now();
    const now = Date.now();
    const settles = unsettled.map(({ record, reservationId }) =>
      storage.settleRequest({
        reservationId,
        record,
        charge: { amountMicros: record.costMicros, description: 'meter batch bench', keyId: key.id },
      }),
    );
    const holds = await Promise.all(
      records.map((record) =>
        storage.reserveCredit({
          accountId: account.id,
          keyId: key.id,
          requestId: record.id,
          amountMicros: 5_000,
          now,
          ttlMs: 60_000,
          record: { ...record, status: 'in_progress' },
          rateLimit: { subject: `key:${key.id}`, limit: 1_000_000_000, windowMs: 60_000, now },
        }),
      ),
    );
    await Promise.all(settles);
    const elapsed = performance.now() - started;
    unsettled = holds.map((hold, i) => {
      if (!hold.ok) throw new Error(`a hold was refused (${hold.reason})`);
      return { record: records[i]!, reservationId: hold.reservation.id };
    });
    return elapsed;
  };
  await round(1);
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
    [schema],
  );
  if (rows.length !== 1) throw new Error(`expected one backend for ${schema}, found ${rows.length}`);
  return { name, storage, schema, backendPid: rows[0]!.pid, round };
}

/** CPU of a process so far in ms, or null where /proc does not show it (the server is elsewhere). */
function cpuMs(pid: number): number | null {
  try {
    return cpuMsOf(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

async function measureSize(n: number, admin: pg.Client): Promise<void> {
  const subjects: Subject[] = [];
  try {
    for (const variant of variants) subjects.push(await openSubject(variant.name, variant.sql, admin));
    for (const subject of subjects) for (let i = 0; i < WARM_UP_ROUNDS; i++) await subject.round(n);
    const tallies = subjects.map(() => ({ walls: [] as number[], cpuMs: 0 as number | null }));
    const perBlock = Math.floor(rounds / blocks);
    for (let block = 0; block < blocks; block++) {
      const order = subjects.map((_, i) => i);
      for (const at of block % 2 ? order.reverse() : order) {
        const subject = subjects[at]!;
        const tally = tallies[at]!;
        const before = cpuMs(subject.backendPid);
        for (let i = 0; i < perBlock; i++) tally.walls.push(await subject.round(n));
        const after = cpuMs(subject.backendPid);
        tally.cpuMs =
          before === null || after === null || tally.cpuMs === null ? null : tally.cpuMs + after - before;
      }
    }
    const statements = perBlock * blocks;
    const firstCpuMs = tallies[0]!.cpuMs;
    const cells = subjects.map((s, at) => {
      const { walls, cpuMs } = tallies[at]!;
      const wall = quantile(sorted(walls), 0.5).toFixed(3);
      if (cpuMs === null) return `${s.name}: ${wall} ms, backend -`;
      const perStatementUs = (cpuMs * 1000) / statements;
      const ratio = firstCpuMs ? ` (×${(cpuMs / firstCpuMs).toFixed(2)})` : '';
      return `${s.name}: ${wall} ms, backend ${perStatementUs.toFixed(0)} µs${ratio}, ${(perStatementUs / n).toFixed(0)} µs per request`;
    });
    console.log(`N=${String(n).padEnd(3)} ${cells.join(' | ')}`);
  } finally {
    for (const subject of subjects) {
      await subject.storage.close();
      await admin.query(`DROP SCHEMA ${subject.schema} CASCADE`);
    }
  }
}

const admin = new pg.Client({ connectionString: postgresUrl });
await admin.connect();
try {
  console.log(
    `Postgres metering statement per batch of N requests (N reserves with their hits + N settles), ` +
      `${blocks} blocks of ${Math.floor(rounds / blocks)} rounds per variant after ${WARM_UP_ROUNDS} of warm-up: ` +
      `client wall time per statement (median), the backend's CPU per statement (× the first variant's) and per request`,
  );
  for (const n of sizes) await measureSize(n, admin);
} finally {
  await admin.end();
}
