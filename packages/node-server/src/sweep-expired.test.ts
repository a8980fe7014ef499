import { createSqliteStorage } from '@tollgate/storage-sqlite';
import { describe, expect, it, vi } from 'vitest';
import { startExpirySweep } from './sweep-expired.js';

describe('startExpirySweep', () => {
  it('deletes expired holds on its timer and stops when asked', async () => {
    const storage = await createSqliteStorage({ path: ':memory:' });
    try {
      const account = await storage.createAccount({ name: 'a' });
      await storage.appendLedgerEntries(account.id, [
        { amountMicros: 1_000, kind: 'credit', description: 'c' },
      ]);
      const key = await storage.createApiKey({
        accountId: account.id,
        name: 'k',
        scope: 'inference',
        env: 'live',
        hash: 'h'.repeat(64),
        prefix: 'gw_live_x',
      });
      const held = await storage.reserveCredit({
        accountId: account.id,
        keyId: key.id,
        requestId: 'req_1',
        amountMicros: 10,
        now: Date.now() - 60_000,
        ttlMs: 1_000,
      });
      expect(held.ok).toBe(true);
      const sweep = vi.spyOn(storage, 'sweepExpired');
      const logger = { info: vi.fn(), warn: vi.fn(), error: vi.fn() };
      const stop = startExpirySweep(storage, logger, 20);
      await vi.waitFor(() => expect(logger.info).toHaveBeenCalledWith({ deleted: 1 }, expect.any(String)));
      stop();
      const calls = sweep.mock.calls.length;
      await new Promise((resolve) => setTimeout(resolve, 60));
      expect(sweep.mock.calls.length).toBe(calls);
    } finally {
      await storage.close();
    }
  });
});
