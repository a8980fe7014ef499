import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import type { Storage } from '@tollgate/core';
import { createPgliteStorage, createPostgresStorage } from '@tollgate/storage-postgres';
import { createSqliteStorage } from '@tollgate/storage-sqlite';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  type AccountSetup,
  type Operation,
  openWorld,
  runStep,
  START,
  setupArb,
  snapshot,
  stepArb,
} from './helpers/metering-operations.js';
import { withPgClient } from './helpers/storage-variants.js';

/*
 * Each money rule is written twice: as kysely transactions in TypeScript (storage-kysely's
 * `reservation-queries.ts`, `settle-queries.ts`, `rate-limit-queries.ts`), which SQLite runs, and as
 * SQL functions (storage-postgres's `sql/functions/`), which Postgres runs, the calls of one turn in
 * one batch statement. Here the same random sequence of operations (`helpers/metering-operations.ts`:
 * reserves with and without their record and rate-limit hit, settles charging all, part or nothing of
 * a hold, second settles, records written alone, rate-limit hits, releases, extensions, top-ups,
 * sweeps, the clock moving on past holds' expiry and a month's end) runs on a fresh SQLite store and a
 * fresh Postgres schema, and every answer and what each store is left with (balances, month totals,
 * keys' spend, live holds, ledgers, records) must be the same. Seeded: a failure names its seed and
 * its shrunk sequence.
 */

const SEED = 46;
const NUM_RUNS = 30;
const databaseUrl = process.env.TEST_DATABASE_URL;

interface Opened {
  storage: Storage;
  close(): Promise<void>;
}

let pglite: PGlite | undefined;
afterAll(() => pglite?.close());

const schemaName = () => `tollgate_diff_${randomBytes(6).toString('hex')}`;

/** The Postgres stores the SQL path runs on: PGlite always, the server when one is configured. */
const POSTGRES: { name: string; skip?: string; open(): Promise<Opened> }[] = [
  {
    name: 'PGlite',
    async open() {
      pglite ??= await PGlite.create();
      const shared = pglite;
      const schema = schemaName();
      const storage = await createPgliteStorage({ pglite: shared, schema });
      return {
        storage,
        async close() {
          await storage.close();
          await shared.exec(`DROP SCHEMA "${schema}" CASCADE; RESET search_path`);
        },
      };
    },
  },
  {
    name: 'the server at TEST_DATABASE_URL',
    ...(databaseUrl ? {} : { skip: 'TEST_DATABASE_URL is not set' }),
    async open() {
      const schema = schemaName();
      const storage = await createPostgresStorage({ connectionString: databaseUrl!, schema, poolSize: 4 });
      return {
        storage,
        async close() {
          await storage.close();
          await withPgClient(databaseUrl!, (client) => client.query(`DROP SCHEMA "${schema}" CASCADE`));
        },
      };
    },
  },
];

async function openSqlite(): Promise<Opened> {
  const storage = await createSqliteStorage({ path: ':memory:' });
  return { storage, close: () => storage.close() };
}

/**
 * Everything a store answered to `steps` and what it was left with. The store's clock is pinned to
 * the run's (its charges' times, the month their totals go to), so both stores stamp alike.
 */
async function transcript(open: () => Promise<Opened>, setup: AccountSetup[], steps: Operation[][]) {
  const clock = { now: START };
  const pinned = vi.spyOn(Date, 'now').mockImplementation(() => clock.now);
  const opened = await open();
  try {
    const world = await openWorld(opened.storage, setup, clock);
    const answers = [];
    for (const step of steps) answers.push(await runStep(world, step));
    return { answers, left: await snapshot(world) };
  } finally {
    pinned.mockRestore();
    await opened.close();
  }
}

/** What the runs exercised, from the SQLite answers: so a run of nothing but trivial paths fails. */
function exercised(seen: Set<string>, answers: unknown[][]): void {
  const text = JSON.stringify(answers);
  for (const reason of [
    'insufficient_credit',
    'key_limit_exceeded',
    'monthly_limit_exceeded',
    'rate_limited',
  ]) {
    if (text.includes(`"reason":"${reason}"`)) seen.add(reason);
  }
  if (text.includes('already has a finished record')) seen.add('a second settle');
  if (text.includes('"allowed":false')) seen.add('a refused hit');
  if (/"swept":[1-9]/.test(text)) seen.add('a sweep that swept');
  if (/"settled":"[^"]+","balanceMicros"/.test(text)) seen.add('a settle');
  if (answers.some((step) => step.length > 2)) seen.add('a turn of several calls');
}

for (const postgres of POSTGRES) {
  describe.skipIf(postgres.skip !== undefined)(
    `metering on SQLite (TypeScript) and ${postgres.name} (SQL)`,
    () => {
      it('the same random operations answer the same and leave the same balances, holds, ledgers and records', async () => {
        const seen = new Set<string>();
        await fc.assert(
          fc.asyncProperty(
            setupArb,
            fc.array(stepArb, { minLength: 10, maxLength: 40 }),
            async (setup, steps) => {
              const expected = await transcript(openSqlite, setup, steps);
              exercised(seen, expected.answers);
              const actual = await transcript(() => postgres.open(), setup, steps);
              expect(actual).toEqual(expected);
            },
          ),
          { seed: SEED, numRuns: NUM_RUNS },
        );
        expect([...seen].sort()).toEqual([
          'a refused hit',
          'a second settle',
          'a settle',
          'a sweep that swept',
          'a turn of several calls',
          'insufficient_credit',
          'key_limit_exceeded',
          'monthly_limit_exceeded',
          'rate_limited',
        ]);
      }, 900_000);
    },
  );
}
