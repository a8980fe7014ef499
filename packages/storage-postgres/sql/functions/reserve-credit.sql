-- One reserve (`Storage.reserveCredit`), the rule of `reservation-queries.ts` in storage-kysely:
-- the account's row lock first (joined to the key), then, in a statement of its own, the live holds of
-- the account and of the key, the key's spend and (with a monthly ceiling) the month's charges (with a
-- capped key's `limit_reset`, the key's holds taken in its window and its spend of the window's days,
-- `key_day_spend`); the
-- checks in the same order (the balance less the holds, the key's cap, the monthly ceiling); then the
-- hold and the request's `in_progress` record. A refusal writes nothing and answers its reason and
-- figures; a hold answers `refusal` NULL.
--
-- A VOLATILE plpgsql function takes a fresh snapshot for each statement under READ COMMITTED, so the
-- read after the lock sees what the writer it waited for committed. The reserves of a batch run
-- through `tollgate_reserve_batch`; this one serves a reserve alone and the per-call fallback
-- (`tollgate_reserve_credits`). Bitmap scans are off for it: the holds are then summed by an
-- index-only scan of credit_reservations_account_expires_idx, which marks the entries of deleted holds
-- dead in the index the first time it meets them, where a bitmap scan would visit the table for each
-- of them on every call until the next vacuum.
CREATE OR REPLACE FUNCTION tollgate_reserve_credit(p_account_id text, p_key_id text, p_amount bigint,
   p_now bigint, p_month_start bigint, p_hold_id text, p_request_id text, p_expires_at bigint,
   p_record jsonb, OUT refusal text, OUT balance bigint, OUT available bigint)
 RETURNS record
 LANGUAGE plpgsql
 SET enable_bitmapscan TO 'off'
AS $function$
DECLARE
  v_monthly numeric;
  v_key_limit numeric;
  v_held_account numeric;
  v_held_key numeric;
  v_key_spent numeric;
  v_month numeric;
  v_reset text;
  v_window_start bigint;
BEGIN
  SELECT a.balance_micros, a.monthly_limit_micros, k.spend_limit_micros, k.limit_reset
    INTO balance, v_monthly, v_key_limit, v_reset
    FROM accounts a JOIN api_keys k ON k.account_id = a.id
    WHERE a.id = p_account_id AND k.id = p_key_id
    FOR UPDATE OF a;
  IF NOT FOUND THEN
    IF EXISTS (SELECT 1 FROM accounts WHERE id = p_account_id) THEN
      RAISE EXCEPTION 'key % is not a key of account %', p_key_id, p_account_id;
    END IF;
    RAISE EXCEPTION 'account % does not exist', p_account_id;
  END IF;
  balance := tollgate_safe_integer(balance);
  IF v_monthly IS NOT NULL THEN v_monthly := tollgate_safe_integer(v_monthly); END IF;
  IF v_key_limit IS NOT NULL THEN
    v_window_start := tollgate_limit_window_start(v_reset, p_now, p_month_start);
  END IF;

  SELECT coalesce(sum(amount_micros), 0),
         coalesce(sum(CASE WHEN key_id = p_key_id AND (v_window_start IS NULL OR created_at >= v_window_start)
           THEN amount_micros ELSE 0 END), 0),
         CASE WHEN v_window_start IS NULL THEN (SELECT spent_micros FROM api_keys WHERE id = p_key_id)
           ELSE (SELECT coalesce(sum(d.spent_micros), 0) FROM key_day_spend d
                 WHERE d.key_id = p_key_id AND d.day_start >= v_window_start) END,
         CASE WHEN v_monthly IS NULL THEN 0 ELSE coalesce((
           SELECT m.charge_total_micros FROM account_month_charges m
           WHERE m.account_id = p_account_id AND m.month_start = p_month_start), 0) END
    INTO v_held_account, v_held_key, v_key_spent, v_month
    FROM credit_reservations
    WHERE account_id = p_account_id AND expires_at > p_now;
  v_held_account := tollgate_safe_integer(v_held_account);
  v_held_key := tollgate_safe_integer(v_held_key);

  IF balance - v_held_account < p_amount THEN
    refusal := 'insufficient_credit';
    available := balance - v_held_account;
    RETURN;
  END IF;
  IF v_key_limit IS NOT NULL THEN
    available := tollgate_safe_integer(v_key_limit) - tollgate_safe_integer(v_key_spent) - v_held_key;
    IF p_amount > available THEN
      refusal := 'key_limit_exceeded';
      RETURN;
    END IF;
  END IF;
  IF v_monthly IS NOT NULL THEN
    available := v_monthly + tollgate_safe_integer(v_month) - v_held_account;
    IF p_amount > available THEN
      refusal := 'monthly_limit_exceeded';
      RETURN;
    END IF;
  END IF;

  INSERT INTO credit_reservations (id, account_id, key_id, request_id, amount_micros, created_at, expires_at)
    VALUES (p_hold_id, p_account_id, p_key_id, p_request_id, p_amount, p_now, p_expires_at);
  IF p_record IS NOT NULL THEN PERFORM tollgate_write_record(p_record); END IF;
  available := NULL;
END
$function$;
