import { PGlite } from '@electric-sql/pglite';
import type { AuthChange, AuthChangeFeed, Storage } from '@tollgate/core';
import { meteredAccount } from '@tollgate/core/testing';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteStorage, createPostgresStorage } from './index.js';
import { quoteIdentifier } from './migrate-postgres.js';
import { randomSchema } from './test-harness.js';

type FeedStorage = Storage & AuthChangeFeed;

const databaseUrl = process.env.TEST_DATABASE_URL;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let pglite: PGlite;
beforeAll(async () => {
  pglite = await PGlite.create();
});
afterAll(async () => {
  await pglite?.close();
});

/** Resolves once `changes` holds `expected`; fails after `withinMs`. */
async function heard(changes: AuthChange[], expected: AuthChange, withinMs = 1_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!changes.includes(expected)) {
    if (Date.now() > deadline) throw new Error(`no change ${expected} within ${withinMs} ms: ${changes}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The same checks on PGlite (one process) and, when one is configured, a real server. */
const variants: { name: string; skip: boolean; open: () => Promise<[FeedStorage, FeedStorage]> }[] = [
  {
    name: 'PGlite',
    skip: false,
    async open() {
      const schema = randomSchema();
      const first = await createPgliteStorage({ pglite, schema });
      const second = await createPgliteStorage({ pglite, schema });
      cleanups.push(async () => {
        await first.close();
        await second.close();
        await pglite.exec(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE; RESET search_path`);
      });
      return [first, second];
    },
  },
  {
    name: 'Postgres server',
    skip: !databaseUrl,
    async open() {
      const schema = randomSchema();
      const first = await createPostgresStorage({ connectionString: databaseUrl!, schema, poolSize: 2 });
      const second = await createPostgresStorage({ connectionString: databaseUrl!, schema, poolSize: 2 });
      cleanups.push(async () => {
        await first.close();
        await second.close();
        const client = new pg.Client({ connectionString: databaseUrl });
        await client.connect();
        await client.query(`DROP SCHEMA ${quoteIdentifier(schema)} CASCADE`);
        await client.end();
      });
      return [first, second];
    },
  },
];

describe.each(variants)('the auth change feed on $name', ({ skip, open }) => {
  it.skipIf(skip)(
    "tells this storage's listeners before a change returns, and every other storage on the database soon after",
    async () => {
      const [first, second] = await open();
      const here: AuthChange[] = [];
      const there: AuthChange[] = [];
      await first.subscribeAuthChanges((change) => here.push(change));
      await second.subscribeAuthChanges((change) => there.push(change));
      const { account, key } = await meteredAccount(first, { balanceMicros: 0, name: 'feed' });
      expect(here).toEqual([]);

      await first.updateApiKey(account.id, key.id, { disabled: true });
      expect(here).toContain(account.id);
      await heard(there, account.id);

      await second.setAccountSuspended(account.id, true);
      expect(there.filter((change) => change === account.id).length).toBeGreaterThanOrEqual(2);
      await heard(here.slice(1), account.id);
    },
  );

  it.skipIf(skip)('reports nothing for reads, and nothing after unsubscribing', async () => {
    const [first, second] = await open();
    const there: AuthChange[] = [];
    const unsubscribe = await second.subscribeAuthChanges((change) => there.push(change));
    const { account, key } = await meteredAccount(first, { balanceMicros: 0, name: 'feed' });
    await first.listApiKeys(account.id);
    await first.findApiKeyById(account.id, key.id);
    // A change after the reads, to know every earlier notification has arrived.
    await first.updateApiKey(account.id, key.id, { name: 'renamed' });
    await heard(there, account.id);
    expect(there).toEqual([account.id]);
    await unsubscribe();
    await first.updateApiKey(account.id, key.id, { name: 'again' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(there).toEqual([account.id]);
  });
});
