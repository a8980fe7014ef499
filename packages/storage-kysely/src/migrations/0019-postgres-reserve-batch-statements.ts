import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { RESERVES_WITHOUT_BITMAP_SCANS } from './0017-postgres-holds-index-scans.js';
import { RESERVE_BATCH_READING_TOTALS } from './0018-month-charge-totals.js';
import { postgresOnlyMigration } from './dialect-only.js';
import { replaceInFunction } from './replace-in-function.js';

/**
 * Postgres only: `tollgate_reserve_batch` runs no statement per call.
 *
 * The function of 0013 (as 0018 left it) ran two statements for nearly every call of a batch: an
 * `EXISTS` over the account's holds, asking whether one had expired since the totals were read,
 * and the `INSERT` of the call's hold. Each statement is planned once per session but started
 * and shut down by the executor on every run, and `perf` on the backends of a bench run put 11 % of
 * their time in executor start-up alone.
 *
 * Now the loop only reads and writes variables:
 * - the totals' read also takes the earliest expiry of the holds it summed, and each admitted hold
 *   lowers it. A hold expired between the instant the totals were read at and a later call's
 *   instant exactly when that earliest expiry is at or before the call's instant. A call stamped
 *   earlier than the totals re-reads them, as the old `EXISTS` then often did;
 * - the admitted calls' holds are inserted together, in one statement, from the calls' own JSON,
 *   before any read of the holds table and at the end. Until then they are counted in the running
 *   totals (the account's, the key's, the earliest expiry), exactly as the rows would be.
 *
 * A batch of reserves of one account and key took, client-side on the local server (a scratch loop
 * of a few hundred batches, each settled after it, the two functions alternating; medians): 10 calls
 * 1.49 → 1.29 ms, 30 calls 2.77–2.84 → 2.33–2.40 ms, 60 calls 4.83 → 3.87 ms.
 *
 * Same parameters, rows, refusals, figures, locks and errors; the conformance suite runs it, and
 * `postgres-reserve-batch.test.ts` checks its answers against the per-call function's where the
 * totals must be read again. The month's end is no longer read by either reserve function since 0018,
 * and the client no longer sends it.
 */
export function postgresReserveBatchStatementsMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, [
    RESERVE_BATCH,
    // Replacing a function resets its settings.
    ...RESERVES_WITHOUT_BITMAP_SCANS,
  ]);
}

/** The admitted calls of `v_holds` (positions in `p_calls`) as holds, in one statement. */
const INSERT_HOLDS = `INSERT INTO credit_reservations
          (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
        SELECT x.value->>'hold_id', x.value->>'account_id', x.value->>'key_id', x.value->>'request_id',
            (x.value->>'amount')::bigint, (x.value->>'now')::bigint, (x.value->>'expires_at')::bigint
          FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
          WHERE (x.ordinality - 1)::integer = ANY (v_holds);
        v_holds := '{}';`;

/**
 * 0018's reserve batch with the per-call statements gone: the changes, in the order they appear in
 * the function.
 */
export const RESERVE_BATCH = replaceInFunction('0019', RESERVE_BATCH_READING_TOTALS, [
  ['  v_at bigint;\n', '  v_at bigint;\n  v_next_expiry bigint;\n'],
  [
    "  v_records integer[] := '{}';\n",
    `  -- Admitted calls whose hold is not inserted yet, all counted in the totals read last (v_held,
  -- v_keys, v_next_expiry); inserted before the holds are read again.
  v_holds integer[] := '{}';
  v_records integer[] := '{}';
`,
  ],
  [
    `    -- The holds live at this call's instant: re-read when one expired (or would not yet have)
    -- between the instant the totals were read at and this one.
    IF v_at IS NULL OR (v_now <> v_at AND EXISTS (
        SELECT 1 FROM credit_reservations h WHERE h.account_id = v_account
          AND h.expires_at > least(v_at, v_now) AND h.expires_at <= greatest(v_at, v_now))) THEN
      SELECT coalesce(sum(h.amount_micros), 0) INTO v_held
        FROM credit_reservations h WHERE h.account_id = v_account AND h.expires_at > v_now;`,
    `    -- The holds live at this call's instant: re-read when one of those summed expired by now, or
    -- for an instant before the one they were read at (a hold may have been live then).
    IF v_at IS NULL OR v_now < v_at OR v_next_expiry <= v_now THEN
      IF cardinality(v_holds) > 0 THEN
        ${INSERT_HOLDS}
      END IF;
      SELECT coalesce(sum(h.amount_micros), 0), min(h.expires_at) INTO v_held, v_next_expiry
        FROM credit_reservations h WHERE h.account_id = v_account AND h.expires_at > v_now;`,
  ],
  [
    '    IF v_figures IS NULL THEN\n',
    '    IF v_figures IS NULL THEN\n      -- A key not in v_keys has no hold among v_holds: admitting one puts its key there.\n',
  ],
  [
    `      INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
        VALUES (c.v->>'hold_id', v_account, v_key, c.v->>'request_id', v_amount, v_now,
          (c.v->>'expires_at')::bigint);
      v_held := v_held + v_amount;
`,
    `      v_holds := v_holds || c.i;
      v_held := v_held + v_amount;
      v_next_expiry := least(v_next_expiry, (c.v->>'expires_at')::bigint);
`,
  ],
  [
    '    RETURN NEXT;\n  END LOOP;\n',
    `    RETURN NEXT;
  END LOOP;
  IF cardinality(v_holds) > 0 THEN
    ${INSERT_HOLDS}
  END IF;
`,
  ],
]);
