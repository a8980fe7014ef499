-- One settle (`Storage.settleRequest`), the rule of `settle-queries.ts` in storage-kysely: the record
-- first (a second settle of the request fails there, before anything else), the hold, then the
-- account's lock last: with a charge, the balance moved, ONE `charge` ledger entry with the balance
-- after it and the key's spend, of the lifetime and of the UTC day the hold was taken in (the call's
-- day without a hold: `key_day_spend`); without one, the balance read. Answers the balance after. The settles
-- of a batch run through `tollgate_settle_batch`; this one serves a settle alone and the per-call
-- fallback (`tollgate_settle_requests`).
CREATE OR REPLACE FUNCTION tollgate_settle_request(p_record jsonb, p_account_id text, p_request_id text,
   p_reservation_id text, p_amount bigint, p_ledger_id text, p_description text, p_key_id text,
   p_created_at bigint, OUT balance bigint)
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_spent bigint;
  v_held_at bigint;
BEGIN
  PERFORM tollgate_write_record(p_record);
  IF p_reservation_id IS NOT NULL THEN
    DELETE FROM credit_reservations WHERE id = p_reservation_id AND account_id = p_account_id
      RETURNING created_at INTO v_held_at;
  END IF;
  IF p_amount IS NULL THEN
    SELECT balance_micros INTO balance FROM accounts WHERE id = p_account_id;
    IF NOT FOUND THEN RAISE EXCEPTION 'account % does not exist', p_account_id; END IF;
    balance := tollgate_safe_integer(balance);
    RETURN;
  END IF;

  UPDATE accounts SET balance_micros = balance_micros - p_amount WHERE id = p_account_id
    RETURNING balance_micros INTO balance;
  IF NOT FOUND THEN RAISE EXCEPTION 'account % does not exist', p_account_id; END IF;
  balance := tollgate_safe_integer(balance);
  INSERT INTO ledger_entries
      (id, account_id, amount_micros, balance_after_micros, kind, description, request_id, key_id, created_at)
    VALUES (p_ledger_id, p_account_id, -p_amount, balance, 'charge', p_description, p_request_id, p_key_id,
      p_created_at);
  IF p_key_id IS NOT NULL THEN
    UPDATE api_keys SET spent_micros = spent_micros + p_amount
      WHERE id = p_key_id AND account_id = p_account_id
      RETURNING spent_micros INTO v_spent;
    IF NOT FOUND THEN RAISE EXCEPTION 'key % is not a key of account %', p_key_id, p_account_id; END IF;
    PERFORM tollgate_safe_integer(v_spent);
    INSERT INTO key_day_spend (key_id, day_start, spent_micros)
      VALUES (p_key_id, tollgate_utc_day_start(coalesce(v_held_at, p_created_at)), p_amount)
      ON CONFLICT (key_id, day_start) DO UPDATE SET spent_micros = key_day_spend.spent_micros + excluded.spent_micros;
  END IF;
END
$function$;
