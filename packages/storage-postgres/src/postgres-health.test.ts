import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import { healthOf } from '@tollgate/core/testing';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createPgliteStorage, createPostgresStorage } from './index.js';
import { quoteIdentifier } from './migrate-postgres.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const OK = { status: 200, body: { status: 'ok' } };
const CANNOT_WRITE = { status: 503, body: { status: 'unavailable', reason: 'storage cannot write' } };

describe('postgres (PGlite): /healthz follows whether the database can write', () => {
  it('default_transaction_read_only = on → 503 "storage cannot write"; off → 200 again', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const storage = await createPgliteStorage({ pglite });
    const health = healthOf(storage);
    expect(await health()).toEqual(OK);

    await pglite.exec('SET default_transaction_read_only = on');
    await expect(storage.createAccount({ name: 'cannot land' })).rejects.toThrow(/read-only/);
    expect(await health()).toEqual(CANNOT_WRITE);

    await pglite.exec('SET default_transaction_read_only = off');
    expect(await health()).toEqual(OK);
  });
});

const databaseUrl = process.env.TEST_DATABASE_URL;

describe.skipIf(!databaseUrl)(
  'postgres (server at TEST_DATABASE_URL): /healthz on a read-only database',
  () => {
    it('the database turned read-only under a running gateway → 503 "storage cannot write"; back → 200', async () => {
      // A scratch database of its own: making it read-only touches no other test's data.
      const name = `tollgate_health_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      cleanups.push(async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(name)} WITH (FORCE)`);
        await admin.end();
      });
      await admin.query(`CREATE DATABASE ${quoteIdentifier(name)}`);
      const url = new URL(databaseUrl!);
      url.pathname = `/${name}`;
      const storage = await createPostgresStorage({ connectionString: url.toString(), poolSize: 2 });
      cleanups.push(() => storage.close());
      const health = healthOf(storage);
      expect(await health()).toEqual(OK);

      // New sessions start read-only; the pool's current ones are ended so it reconnects.
      const setReadOnly = async (on: boolean) => {
        await admin.query(
          `ALTER DATABASE ${quoteIdentifier(name)} ${on ? 'SET default_transaction_read_only = on' : 'RESET default_transaction_read_only'}`,
        );
        await admin.query(
          'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [name],
        );
        // Let the pool see its idle connections end before the next probe takes one: a connection
        // that ends while checked out is an 'error' event on a pg client nobody listens to.
        await vi.waitFor(
          async () => {
            const { rows } = await admin.query('SELECT 1 FROM pg_stat_activity WHERE datname = $1', [name]);
            expect(rows).toEqual([]);
          },
          { timeout: 5_000 },
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
      };
      await setReadOnly(true);
      expect(await health()).toEqual(CANNOT_WRITE);

      await setReadOnly(false);
      expect(await health()).toEqual(OK);
    }, 30_000);
  },
);
