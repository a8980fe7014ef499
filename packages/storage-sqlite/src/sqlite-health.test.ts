import { healthOf } from '@tollgate/core/testing';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqliteStorageOn } from './sqlite-storage.js';
import { tempDatabasePath } from './test-harness.js';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('sqlite: /healthz follows whether the file can be written', () => {
  it('a connection that may no longer write (query_only) → 503 "storage cannot write", then 200 again', async () => {
    const file = tempDatabasePath();
    cleanups.push(file.remove);
    const database = new BetterSqlite3(file.path);
    const storage = await createSqliteStorageOn(database);
    cleanups.push(() => storage.close());
    const health = healthOf(storage);
    expect(await health()).toEqual({ status: 200, body: { status: 'ok' } });

    // Reads still work, as on a full disk or a file turned read-only under a running server.
    database.pragma('query_only = 1');
    expect(await storage.countAccounts()).toBe(0);
    await expect(storage.createAccount({ name: 'cannot land' })).rejects.toThrow();
    expect(await health()).toEqual({
      status: 503,
      body: { status: 'unavailable', reason: 'storage cannot write' },
    });

    database.pragma('query_only = 0');
    expect(await health()).toEqual({ status: 200, body: { status: 'ok' } });
    await storage.createAccount({ name: 'lands again' });
  });

  it('a closed database → 503 "storage unreachable"', async () => {
    const file = tempDatabasePath();
    cleanups.push(file.remove);
    const storage = await createSqliteStorageOn(new BetterSqlite3(file.path));
    const health = healthOf(storage);
    expect((await health()).status).toBe(200);
    await storage.close();
    expect(await health()).toEqual({
      status: 503,
      body: { status: 'unavailable', reason: 'storage unreachable' },
    });
  });
});
