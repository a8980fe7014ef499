import { describe, expect, it } from 'vitest';
import { rawCount, rawOne, toNumber } from './raw-sql.js';
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
  'batches',
  'batch_items',
  'health_probe',
  'byok_keys',
  'presets',
  'response_cache',
  'oauth_clients',
  'oauth_codes',
  'guardrails',
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

    it('probeWrite - commits one row of health_probe, updated in place by the next probe', async () => {
      await expect(ctx.storage.probeWrite(1_700_000_000_000)).resolves.toBeUndefined();
      expect(toNumber((await rawOne(ctx, 'SELECT probed_at FROM health_probe')).probed_at)).toBe(
        1_700_000_000_000,
      );
      await ctx.storage.probeWrite(1_700_000_001_000);
      await Promise.all([
        ctx.storage.probeWrite(1_700_000_002_000),
        ctx.storage.probeWrite(1_700_000_002_000),
      ]);
      const rows = await ctx.raw('SELECT id, probed_at FROM health_probe');
      expect(rows.map((row) => [toNumber(row.id), toNumber(row.probed_at)])).toEqual([
        [1, 1_700_000_002_000],
      ]);
    });
  });
}
