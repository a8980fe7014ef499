import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { RESERVES_WITHOUT_BITMAP_SCANS } from './0017-postgres-holds-index-scans.js';
import { postgresOnlyMigration } from './dialect-only.js';

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

/** Per call: its position, and refusal/figures as `tollgate_reserve_credit` answers them. */
export const RESERVE_BATCH = `CREATE OR REPLACE FUNCTION tollgate_reserve_batch(p_calls jsonb)
RETURNS TABLE (ord integer, refusal text, balance bigint, available bigint, error text, code text)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_account text;
  v_key text;
  v_at bigint;
  v_next_expiry bigint;
  v_month_start bigint;
  v_now bigint;
  v_amount bigint;
  v_monthly bigint;
  v_held numeric;
  v_month numeric;
  v_keys jsonb;
  v_figures jsonb;
  v_key_held numeric;
  v_free numeric;
  v_key_free numeric;
  v_month_free numeric;
  -- Admitted calls whose hold is not inserted yet, all counted in the totals read last (v_held,
  -- v_keys, v_next_expiry); inserted before the holds are read again.
  v_holds integer[] := '{}';
  v_records integer[] := '{}';
BEGIN
  FOR c IN SELECT (x.ordinality - 1)::integer AS i, x.value AS v
             FROM jsonb_array_elements(p_calls) WITH ORDINALITY x LOOP
    ord := c.i; refusal := NULL; available := NULL; error := NULL; code := NULL;
    v_now := (c.v->>'now')::bigint;
    v_amount := (c.v->>'amount')::bigint;
    v_key := c.v->>'key_id';
    IF v_account IS DISTINCT FROM c.v->>'account_id' THEN
      v_account := c.v->>'account_id';
      SELECT a.balance_micros, a.monthly_limit_micros INTO balance, v_monthly
        FROM accounts a WHERE a.id = v_account FOR NO KEY UPDATE;
      IF NOT FOUND THEN RAISE EXCEPTION 'account % does not exist', v_account; END IF;
      balance := tollgate_safe_integer(balance);
      IF v_monthly IS NOT NULL THEN v_monthly := tollgate_safe_integer(v_monthly); END IF;
      v_at := NULL;
      v_month_start := NULL;
    END IF;
    -- The holds live at this call's instant: re-read when one of those summed expired by now, or
    -- for an instant before the one they were read at (a hold may have been live then).
    IF v_at IS NULL OR v_now < v_at OR v_next_expiry <= v_now THEN
      IF cardinality(v_holds) > 0 THEN
        ${INSERT_HOLDS}
      END IF;
      SELECT coalesce(sum(h.amount_micros), 0), min(h.expires_at) INTO v_held, v_next_expiry
        FROM credit_reservations h WHERE h.account_id = v_account AND h.expires_at > v_now;
      v_held := tollgate_safe_integer(v_held);
      v_keys := '{}';
      v_at := v_now;
    END IF;
    v_figures := v_keys->v_key;
    IF v_figures IS NULL THEN
      -- A key not in v_keys has no hold among v_holds: admitting one puts its key there.
      SELECT jsonb_build_array(k.spend_limit_micros, tollgate_safe_integer(k.spent_micros),
               (SELECT tollgate_safe_integer(coalesce(sum(h.amount_micros), 0)) FROM credit_reservations h
                 WHERE h.account_id = v_account AND h.key_id = v_key AND h.expires_at > v_at))
        INTO v_figures FROM api_keys k WHERE k.id = v_key AND k.account_id = v_account;
      IF NOT FOUND THEN RAISE EXCEPTION 'key % is not a key of account %', v_key, v_account; END IF;
    END IF;
    v_key_held := (v_figures->>2)::numeric;
    IF v_monthly IS NOT NULL AND v_month_start IS DISTINCT FROM (c.v->>'month_start')::bigint THEN
      v_month_start := (c.v->>'month_start')::bigint;
      SELECT tollgate_safe_integer(coalesce((SELECT m.charge_total_micros FROM account_month_charges m
          WHERE m.account_id = v_account AND m.month_start = v_month_start), 0)) INTO v_month;
    END IF;

    -- What each check leaves; NULL (never refusing) without a key limit or a monthly ceiling.
    v_free := balance - v_held;
    v_key_free := CASE WHEN v_figures->>0 IS NOT NULL THEN
      tollgate_safe_integer((v_figures->>0)::numeric) - (v_figures->>1)::bigint - v_key_held END;
    v_month_free := CASE WHEN v_monthly IS NOT NULL THEN v_monthly + v_month - v_held END;
    IF v_free < v_amount THEN
      refusal := 'insufficient_credit';
      available := v_free;
    ELSIF v_amount > v_key_free THEN
      refusal := 'key_limit_exceeded';
      available := v_key_free;
    ELSIF v_amount > v_month_free THEN
      refusal := 'monthly_limit_exceeded';
      available := v_month_free;
    ELSE
      v_holds := v_holds || c.i;
      v_held := v_held + v_amount;
      v_next_expiry := least(v_next_expiry, (c.v->>'expires_at')::bigint);
      v_keys := jsonb_set(v_keys, ARRAY[v_key], jsonb_set(v_figures, '{2}', to_jsonb(v_key_held + v_amount)));
      IF jsonb_typeof(c.v->'record') = 'object' THEN v_records := v_records || c.i; END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  IF cardinality(v_holds) > 0 THEN
    ${INSERT_HOLDS}
  END IF;
  -- The admitted calls' in_progress records: new ids, so a plain insert (a clash fails the batch).
  INSERT INTO request_records
    SELECT r.* FROM jsonb_array_elements(p_calls) WITH ORDINALITY x,
      LATERAL jsonb_populate_record(NULL::request_records, x.value->'record') r
    WHERE (x.ordinality - 1)::integer = ANY (v_records);
END
$$`;
