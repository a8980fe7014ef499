import { PGlite } from '@electric-sql/pglite';
import { newId } from '@tollgate/core';
import { meteredAccount, requestRecord } from '@tollgate/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { createPgliteStorage } from './index.js';

/*
 * What the native reserve and settle (the functions of `sql/functions/`) must keep equal to the kysely
 * transactions beyond what the conformance suite checks.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('postgres native reserve and settle', () => {
  // Both upsert a record over its in_progress row: the single call and the set-based settle.
  it.each(['tollgate_write_record', 'tollgate_settle_batch'])(
    '%s rewrites every column of request_records but the id and the owner',
    async (fn) => {
      const pglite = await PGlite.create();
      cleanups.push(() => pglite.close());
      await createPgliteStorage({ pglite, schema: 'write_record' });
      const columns = await pglite.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
        WHERE table_schema = 'write_record' AND table_name = 'request_records'`,
      );
      const definition = await pglite.query<{ body: string }>(
        `SELECT pg_get_functiondef('${fn}'::regproc) AS body`,
      );
      // The SET list of the upsert (the WHERE after it compares the owner too).
      const body = definition.rows[0]!.body.split('DO UPDATE SET')[1]!.split('WHERE')[0]!;
      const rewritten = columns.rows
        .map((row) => row.column_name)
        .filter((column) => body.includes(`${column} = excluded.${column}`));
      const expected = columns.rows
        .map((row) => row.column_name)
        .filter((c) => c !== 'id' && c !== 'account_id');
      expect(rewritten.sort()).toEqual(expected.sort());
      expect(expected.length).toBeGreaterThan(25);
    },
  );

  it('a record with a lone UTF-16 surrogate settles, stored with U+FFFD as a text parameter would be', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const storage = await createPgliteStorage({ pglite });
    const account = await storage.createAccount({ name: 'surrogates' });
    const record = requestRecord(account.id, {
      id: newId('gen'),
      errorMessage: 'a\uD800b',
      model: 'm\uDC00',
    });

    await storage.settleRequest({ reservationId: null, record, charge: null });

    expect(await storage.getRequestRecord(account.id, record.id)).toMatchObject({
      errorMessage: 'a\uFFFDb',
      model: 'm\uFFFD',
    });
  });

  it('a record with a NUL character (say in an upstream error) settles and is charged, the NUL as U+FFFD', async () => {
    const pglite = await PGlite.create();
    cleanups.push(() => pglite.close());
    const storage = await createPgliteStorage({ pglite });
    const { account, key } = await meteredAccount(storage, { balanceMicros: 1_000, name: 'nul' });
    const record = requestRecord(account.id, {
      id: newId('gen'),
      errorMessage: 'bad\u0000byte',
      costMicros: 10,
    });

    await storage.settleRequest({
      reservationId: null,
      record,
      charge: { amountMicros: 10, description: 'nul', keyId: key.id },
    });

    expect(await storage.getRequestRecord(account.id, record.id)).toMatchObject({
      errorMessage: 'bad\uFFFDbyte',
    });
    expect(await storage.getAccount(account.id)).toMatchObject({ balanceMicros: 990 });
  });
});
