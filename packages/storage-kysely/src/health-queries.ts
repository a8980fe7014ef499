import type { EpochMs } from '@tollgate/core';
import { assertInteger, type QueryContext, write } from './query-context.js';

/**
 * `Storage.probeWrite`: upserts the one row of `health_probe` in a write transaction, which (like
 * every write) resolves only once committed. So it fails exactly when a metered request's writes
 * would: a full disk, a read-only file or server, a lost connection.
 */
export async function probeWrite(ctx: QueryContext, now: EpochMs): Promise<void> {
  assertInteger('now', now);
  await write(ctx, (trx) =>
    trx
      .insertInto('health_probe')
      .values({ id: 1, probed_at: now })
      .onConflict((oc) => oc.column('id').doUpdateSet({ probed_at: now }))
      .execute(),
  );
}
