import { newId } from '@tollgate/core';
import { requestRecord } from '@tollgate/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { postgresHarness } from './test-harness.js';

const databaseUrl = process.env.TEST_DATABASE_URL;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/*
 * Races that only a real server can stage: a second connection holds the account's row lock while
 * a reserve waits for it, then commits a settle-like change.
 */
describe.skipIf(!databaseUrl)(
  'postgres reserve under a concurrent settle (server at TEST_DATABASE_URL)',
  () => {
    it("a reserve that waited for the account lock sees the key's spend the lock holder committed", async () => {
      const harness = await postgresHarness(databaseUrl!);
      cleanups.push(() => harness.close());
      const { storage, raw } = harness;
      const account = await storage.createAccount({ name: 'race' });
      await storage.appendLedgerEntries(account.id, [
        { amountMicros: 1_000_000, kind: 'credit', description: 'c' },
      ]);
      const key = await storage.createApiKey({
        accountId: account.id,
        name: 'capped',
        scope: 'inference',
        env: 'live',
        hash: 'b'.repeat(64),
        prefix: 'gw_live_bbb',
        spendLimitMicros: 1_000,
      });
      const first = await storage.reserveCredit({
        accountId: account.id,
        keyId: key.id,
        requestId: newId('gen'),
        amountMicros: 600,
        now: Date.now(),
        ttlMs: 60_000,
      });
      if (!first.ok) throw new Error('the first hold was refused');

      // A settle of the first request, by hand on another connection: it holds the account's lock…
      await raw('BEGIN');
      await raw(`SELECT id FROM accounts WHERE id = '${account.id}' FOR UPDATE`);
      // …while a second reserve of 500 (the cap leaves 400 once the first charge lands) waits for it.
      const second = storage.reserveCredit({
        accountId: account.id,
        keyId: key.id,
        requestId: newId('gen'),
        amountMicros: 500,
        now: Date.now(),
        ttlMs: 60_000,
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await raw(`UPDATE accounts SET balance_micros = balance_micros - 600 WHERE id = '${account.id}'`);
      await raw(`UPDATE api_keys SET spent_micros = spent_micros + 600 WHERE id = '${key.id}'`);
      await raw(`DELETE FROM credit_reservations WHERE id = '${first.reservation.id}'`);
      await raw('COMMIT');

      const result = await second;
      expect(result).toMatchObject({ ok: false, reason: 'key_limit_exceeded', availableMicros: 400 });
      // The settle path itself, for good measure: a record with the charge goes in cleanly after.
      await storage.settleRequest({
        reservationId: null,
        charge: null,
        record: requestRecord(account.id, { id: newId('gen'), keyId: key.id }),
      });
    });
  },
);
