import { describe, expect, it } from 'vitest';
import { rawCount } from './raw-sql.js';
import type { ConformanceContext } from './storage-harness.js';

/** The tables every adapter creates; names are a contract with the raw reads of this suite. */
export const REQUIRED_TABLES = [
  'accounts',
  'projects',
  'api_keys',
  'ledger_entries',
  'request_records',
  'credit_reservations',
  'idempotency_claims',
  'rate_limit_windows',
] as const;

export function schemaAndHealthCases(ctx: ConformanceContext): void {
  describe('schema and health', () => {
    for (const table of REQUIRED_TABLES) {
      it(`schema - table ${table} exists and starts empty`, async () => {
        expect(await rawCount(ctx, table)).toBe(0);
      });
    }

    it('ping - resolves when the database answers', async () => {
      await expect(ctx.storage.ping()).resolves.toBeUndefined();
    });
  });
}
