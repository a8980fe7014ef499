import type { Migration } from 'kysely/migration';
import type { DialectCapabilities } from '../dialect-capabilities.js';
import { REWRITE_RECORD } from './0010-postgres-hot-path.js';
import { postgresOnlyMigration } from './dialect-only.js';

/**
 * Postgres only (`dialect.nativeReserveAndSettle`; nothing on SQLite): the group-committed reserve
 * and settle of 0011 without a subtransaction per call. `tollgate_reserve_batch` and
 * `tollgate_settle_batch` take the same `jsonb` calls and answer the same rows as
 * `tollgate_reserve_credits` / `tollgate_settle_requests`, but do a batch's work per account instead
 * of per call:
 *
 * - **reserve**: an account's row is locked once, its live holds (and the key's, the month's
 *   charges) are summed once, and the batch's calls of that account are admitted one after the
 *   other against those running totals, in the batch's order and with the checks, figures and
 *   refusals of `tollgate_reserve_credit`. A call whose `now` differs from the one the totals were
 *   read at re-reads them if a hold expired in between, so every call sees exactly the holds live
 *   at its own instant.
 * - **settle**: the records are written in one statement, the holds deleted in one, each account's
 *   balance moved once by its calls' total, and the ledger entries inserted in one statement with
 *   each call's `balance_after` (the balance after the calls before it, in the batch's order).
 *
 * Both take the account's lock as `FOR NO KEY UPDATE` (it excludes every other reserve and settle
 * of the account, and not a foreign-key check of an insert naming it), in account order. Neither
 * catches an error: the one failure a settle expects (a record already finished) is detected
 * without raising and answered for that call alone; anything else (a missing account or key, an
 * unsafe integer, a duplicate id) fails the whole statement, which writes nothing, and the client
 * sends the same batch again to 0011's per-call functions, which answer each call's own error
 * exactly as before (`native-metering-queries.ts`). So 0010's single-call functions stay the
 * reference, and the conformance suite runs both.
 */
export function postgresSetBasedBatchesMigration(dialect: DialectCapabilities): Migration {
  return postgresOnlyMigration(dialect, STATEMENTS);
}

/** Per call: its position, and refusal/figures as `tollgate_reserve_credit` answers them. */
export const RESERVE_BATCH = `CREATE FUNCTION tollgate_reserve_batch(p_calls jsonb)
RETURNS TABLE (ord integer, refusal text, balance bigint, available bigint, error text, code text)
LANGUAGE plpgsql AS $$
DECLARE
  c record;
  v_account text;
  v_key text;
  v_at bigint;
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
    -- The holds live at this call's instant: re-read when one expired (or would not yet have)
    -- between the instant the totals were read at and this one.
    IF v_at IS NULL OR (v_now <> v_at AND EXISTS (
        SELECT 1 FROM credit_reservations h WHERE h.account_id = v_account
          AND h.expires_at > least(v_at, v_now) AND h.expires_at <= greatest(v_at, v_now))) THEN
      SELECT coalesce(sum(h.amount_micros), 0) INTO v_held
        FROM credit_reservations h WHERE h.account_id = v_account AND h.expires_at > v_now;
      v_held := tollgate_safe_integer(v_held);
      v_keys := '{}';
      v_at := v_now;
    END IF;
    v_figures := v_keys->v_key;
    IF v_figures IS NULL THEN
      SELECT jsonb_build_array(k.spend_limit_micros, tollgate_safe_integer(k.spent_micros),
               (SELECT tollgate_safe_integer(coalesce(sum(h.amount_micros), 0)) FROM credit_reservations h
                 WHERE h.account_id = v_account AND h.key_id = v_key AND h.expires_at > v_at))
        INTO v_figures FROM api_keys k WHERE k.id = v_key AND k.account_id = v_account;
      IF NOT FOUND THEN RAISE EXCEPTION 'key % is not a key of account %', v_key, v_account; END IF;
    END IF;
    v_key_held := (v_figures->>2)::numeric;
    IF v_monthly IS NOT NULL AND v_month_start IS DISTINCT FROM (c.v->>'month_start')::bigint THEN
      v_month_start := (c.v->>'month_start')::bigint;
      SELECT tollgate_safe_integer(coalesce(sum(l.amount_micros), 0)) INTO v_month FROM ledger_entries l
        WHERE l.account_id = v_account AND l.kind = 'charge'
          AND l.created_at >= v_month_start AND l.created_at < (c.v->>'month_end')::bigint;
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
      INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
        VALUES (c.v->>'hold_id', v_account, v_key, c.v->>'request_id', v_amount, v_now,
          (c.v->>'expires_at')::bigint);
      v_held := v_held + v_amount;
      v_keys := jsonb_set(v_keys, ARRAY[v_key], jsonb_set(v_figures, '{2}', to_jsonb(v_key_held + v_amount)));
      IF jsonb_typeof(c.v->'record') = 'object' THEN v_records := v_records || c.i; END IF;
    END IF;
    RETURN NEXT;
  END LOOP;
  -- The admitted calls' in_progress records: new ids, so a plain insert (a clash fails the batch).
  INSERT INTO request_records
    SELECT r.* FROM jsonb_array_elements(p_calls) WITH ORDINALITY x,
      LATERAL jsonb_populate_record(NULL::request_records, x.value->'record') r
    WHERE (x.ordinality - 1)::integer = ANY (v_records);
END
$$`;

/**
 * Per call: its position and the balance after it, or the one error a settle expects (its record
 * was already finished: it changes nothing, as the single call's rollback).
 */
const SETTLE_BATCH = `CREATE FUNCTION tollgate_settle_batch(p_calls jsonb)
RETURNS TABLE (ord integer, balance bigint, error text, code text)
LANGUAGE plpgsql AS $$
DECLARE
  v_written integer[];
  v_balances jsonb;
  v_complete boolean;
BEGIN
  WITH input AS (
    SELECT (x.ordinality - 1)::integer AS i, x.value AS v FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
  ), written AS (
    INSERT INTO request_records
      SELECT r.* FROM input, LATERAL jsonb_populate_record(NULL::request_records, input.v->'record') r
    ON CONFLICT (id) DO UPDATE SET
${REWRITE_RECORD}
    WHERE request_records.status = 'in_progress' AND request_records.account_id = excluded.account_id
    RETURNING request_records.id
  )
  SELECT coalesce(array_agg(input.i), '{}') INTO v_written
    FROM input WHERE input.v->'record'->>'id' IN (SELECT id FROM written);

  DELETE FROM credit_reservations h
    USING jsonb_array_elements(p_calls) WITH ORDINALITY x
    WHERE (x.ordinality - 1)::integer = ANY (v_written)
      AND h.id = x.value->>'reservation_id' AND h.account_id = x.value->>'account_id';

  -- The accounts charged, locked in account order (as every batch locks them).
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.value->>'account_id' FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
                   WHERE (x.ordinality - 1)::integer = ANY (v_written) AND x.value->>'amount' IS NOT NULL)
    ORDER BY a.id FOR NO KEY UPDATE;

  WITH settled AS (
    SELECT (x.ordinality - 1)::integer AS i, x.value->>'account_id' AS account_id,
      x.value->>'request_id' AS request_id, (x.value->>'amount')::bigint AS amount,
      x.value->>'ledger_id' AS ledger_id, x.value->>'description' AS description,
      x.value->>'key_id' AS key_id, (x.value->>'created_at')::bigint AS created_at
    FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
    WHERE (x.ordinality - 1)::integer = ANY (v_written)
  ), totals AS (
    SELECT s.account_id, sum(s.amount) AS total FROM settled s WHERE s.amount IS NOT NULL GROUP BY s.account_id
  ), moved AS (
    UPDATE accounts a SET balance_micros = a.balance_micros - t.total FROM totals t
      WHERE a.id = t.account_id RETURNING a.id, a.balance_micros
  ), after AS (
    -- A call's balance after it: the balance now, plus what the account's later calls took.
    SELECT s.*, coalesce(m.balance_micros, a.balance_micros)
        + coalesce(sum(s.amount) OVER (PARTITION BY s.account_id ORDER BY s.i DESC), 0)
        - coalesce(s.amount, 0) AS balance_after
      FROM settled s LEFT JOIN moved m ON m.id = s.account_id LEFT JOIN accounts a ON a.id = s.account_id
  ), ledger AS (
    INSERT INTO ledger_entries
        (id, account_id, amount_micros, balance_after_micros, kind, description, request_id, key_id, created_at)
      SELECT e.ledger_id, e.account_id, -e.amount, tollgate_safe_integer(e.balance_after), 'charge',
          e.description, e.request_id, e.key_id, e.created_at
        FROM after e WHERE e.amount IS NOT NULL ORDER BY e.i
      RETURNING 1
  ), key_totals AS (
    SELECT s.key_id, s.account_id, sum(s.amount) AS total FROM settled s
      WHERE s.amount IS NOT NULL AND s.key_id IS NOT NULL GROUP BY s.key_id, s.account_id
  ), spent AS (
    UPDATE api_keys k SET spent_micros = k.spent_micros + t.total FROM key_totals t
      WHERE k.id = t.key_id AND k.account_id = t.account_id
      RETURNING tollgate_safe_integer(k.spent_micros)
  )
  SELECT coalesce(jsonb_object_agg(e.i::text, tollgate_safe_integer(e.balance_after)), '{}'),
      (SELECT count(*) FROM moved) = (SELECT count(*) FROM totals)
        AND (SELECT count(*) FROM spent) = (SELECT count(*) FROM key_totals)
        AND (SELECT count(*) FROM ledger) = (SELECT count(*) FROM settled s WHERE s.amount IS NOT NULL)
        AND coalesce(bool_and(e.balance_after IS NOT NULL), true)
    INTO v_balances, v_complete
    FROM after e;
  IF NOT v_complete THEN
    -- A missing account or key: the per-call functions name it for the call it belongs to.
    RAISE EXCEPTION 'a settle of this batch names a missing account or a key of another account';
  END IF;

  RETURN QUERY
    SELECT (x.ordinality - 1)::integer, (v_balances->>((x.ordinality - 1)::text))::bigint,
      CASE WHEN NOT (v_balances ? (x.ordinality - 1)::text)
        THEN format('request %s already has a finished record', x.value->'record'->>'id') END,
      CASE WHEN NOT (v_balances ? (x.ordinality - 1)::text) THEN 'P0001' END
    FROM jsonb_array_elements(p_calls) WITH ORDINALITY x ORDER BY x.ordinality;
END
$$`;

/**
 * The live holds of an account are the ones expiring after now: one range of this index, which also
 * answers "did a hold of this account expire between two instants" from a few entries.
 */
const HOLDS_INDEX = `CREATE INDEX credit_reservations_account_expires_idx
  ON credit_reservations (account_id, expires_at) INCLUDE (key_id, amount_micros)`;

/**
 * The settles and the reserves of one turn in one transaction, so they pay one COMMIT (one WAL
 * flush) together and never wait for each other's account locks: every account of the batch is
 * locked first, in account order, then the settles run (freeing their holds, charging), then the
 * reserves (seeing them). Rows say which list (`kind`) and which position in it (`ord`).
 */
const METER_BATCH = `CREATE FUNCTION tollgate_meter_batch(p_settles jsonb, p_reserves jsonb)
RETURNS TABLE (kind text, ord integer, refusal text, balance bigint, available bigint, error text, code text)
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM 1 FROM accounts a
    WHERE a.id IN (SELECT x.value->>'account_id' FROM jsonb_array_elements(p_settles) x
                   UNION SELECT x.value->>'account_id' FROM jsonb_array_elements(p_reserves) x)
    ORDER BY a.id FOR NO KEY UPDATE;
  RETURN QUERY SELECT 'settle'::text, s.ord, NULL::text, s.balance, NULL::bigint, s.error, s.code
    FROM tollgate_settle_batch(p_settles) s;
  RETURN QUERY SELECT 'reserve'::text, r.ord, r.refusal, r.balance, r.available, r.error, r.code
    FROM tollgate_reserve_batch(p_reserves) r;
END
$$`;

const STATEMENTS = [
  HOLDS_INDEX,
  // Its leading column makes the single-column index redundant, and each index costs every hold's
  // insert and delete.
  'DROP INDEX credit_reservations_account_id_idx',
  RESERVE_BATCH,
  SETTLE_BATCH,
  METER_BATCH,
];
