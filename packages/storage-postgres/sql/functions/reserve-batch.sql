-- A batch of reserves, set-based: the same calls and rows as `tollgate_reserve_credits`, with the
-- checks, figures and refusals of `tollgate_reserve_credit`, but the work done per account instead of
-- per call. The client sorts a batch by account (the lock order of every batch).
--
-- - An account's row is locked once (FOR NO KEY UPDATE: it excludes every other reserve and settle of
--   the account, and not a foreign-key check of an insert naming it), its live holds summed once,
--   and its calls admitted one after the other against running totals: the account's holds, each
--   key's figures (cap, spend, holds) in `v_keys`, and the earliest expiry among the holds summed. A
--   capped key with a `limit_reset` has the figures of its window (the holds taken in it, the spend of
--   its days in `key_day_spend`), as `tollgate_reserve_credit`; the totals are read again for a call
--   of another UTC day than the one they were read for, so every key's window is that of its calls.
-- - A call stamped at another instant sees exactly the holds live at its own: the totals are read
--   again when one of the holds summed has expired by the call's instant (the earliest expiry is at
--   or before it), or when the call is stamped before the instant they were read at.
-- - The loop runs no statement per call: the admitted holds are inserted together, from the calls'
--   own JSON, before the holds are read again and at the end; until then they count in the totals
--   exactly as their rows would.
--
-- It catches no error: a missing account or key, an unsafe integer or a duplicate id fails the whole
-- statement, which writes nothing, and the client sends the same calls to `tollgate_reserve_credits`,
-- which answers each call's own error. Bitmap scans are off, as for `tollgate_reserve_credit`.
CREATE OR REPLACE FUNCTION tollgate_reserve_batch(p_calls jsonb)
 RETURNS TABLE(ord integer, refusal text, balance bigint, available bigint, error text, code text)
 LANGUAGE plpgsql
 SET enable_bitmapscan TO 'off'
AS $function$
DECLARE
  c record;
  v_account text;
  v_key text;
  v_at bigint;
  v_day bigint;
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
    IF v_at IS NULL OR v_now < v_at OR v_next_expiry <= v_now OR v_day <> tollgate_utc_day_start(v_now) THEN
      IF cardinality(v_holds) > 0 THEN
        INSERT INTO credit_reservations
          (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
        SELECT x.value->>'hold_id', x.value->>'account_id', x.value->>'key_id', x.value->>'request_id',
            (x.value->>'amount')::bigint, (x.value->>'now')::bigint, (x.value->>'expires_at')::bigint
          FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
          WHERE (x.ordinality - 1)::integer = ANY (v_holds);
        v_holds := '{}';
      END IF;
      SELECT coalesce(sum(h.amount_micros), 0), min(h.expires_at) INTO v_held, v_next_expiry
        FROM credit_reservations h WHERE h.account_id = v_account AND h.expires_at > v_now;
      v_held := tollgate_safe_integer(v_held);
      v_keys := '{}';
      v_at := v_now;
      v_day := tollgate_utc_day_start(v_now);
    END IF;
    v_figures := v_keys->v_key;
    IF v_figures IS NULL THEN
      -- A key not in v_keys has no hold among v_holds: admitting one puts its key there.
      SELECT jsonb_build_array(k.spend_limit_micros,
               CASE WHEN w.start IS NULL THEN tollgate_safe_integer(k.spent_micros)
                 ELSE (SELECT tollgate_safe_integer(coalesce(sum(d.spent_micros), 0)) FROM key_day_spend d
                   WHERE d.key_id = v_key AND d.day_start >= w.start) END,
               (SELECT tollgate_safe_integer(coalesce(sum(h.amount_micros), 0)) FROM credit_reservations h
                 WHERE h.account_id = v_account AND h.key_id = v_key AND h.expires_at > v_at
                   AND (w.start IS NULL OR h.created_at >= w.start)))
        INTO v_figures FROM api_keys k,
          LATERAL (SELECT CASE WHEN k.spend_limit_micros IS NOT NULL THEN tollgate_limit_window_start(
            k.limit_reset, v_now, (c.v->>'month_start')::bigint) END AS start) w
        WHERE k.id = v_key AND k.account_id = v_account;
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
    INSERT INTO credit_reservations
      (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
    SELECT x.value->>'hold_id', x.value->>'account_id', x.value->>'key_id', x.value->>'request_id',
        (x.value->>'amount')::bigint, (x.value->>'now')::bigint, (x.value->>'expires_at')::bigint
      FROM jsonb_array_elements(p_calls) WITH ORDINALITY x
      WHERE (x.ordinality - 1)::integer = ANY (v_holds);
  END IF;
  -- The admitted calls' in_progress records: new ids, so a plain insert (a clash fails the batch).
  INSERT INTO request_records
    SELECT r.* FROM jsonb_array_elements(p_calls) WITH ORDINALITY x,
      LATERAL jsonb_populate_record(NULL::request_records, x.value->'record') r
    WHERE (x.ordinality - 1)::integer = ANY (v_records);
END
$function$;
