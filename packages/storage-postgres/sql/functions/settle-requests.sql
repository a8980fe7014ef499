-- A batch of settles (`p_calls`: a jsonb array of `tollgate_settle_request`'s parameters without
-- their `p_`), each run through `tollgate_settle_request` in the array's order and its own
-- subtransaction, as `tollgate_reserve_credits` runs reserves: a call that fails (a second settle of
-- a request, a missing account) is rolled back alone and answers its error and SQLSTATE; the others
-- commit. The client sends a settle alone here, and a batch whose set-based statement failed.
--
-- Where a call of a batch locked an account row (the ledger insert's foreign-key check takes KEY SHARE)
-- and a later call of the same batch updates it, Postgres keeps the earlier lock by giving the new row
-- version a MultiXact as its xmax: vacuum freezes those like xids
-- (`autovacuum_multixact_freeze_max_age`).
CREATE OR REPLACE FUNCTION tollgate_settle_requests(p_calls jsonb)
 RETURNS TABLE(ord integer, balance bigint, error text, code text)
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_call jsonb;
  v_ord bigint;
BEGIN
  FOR v_call, v_ord IN SELECT c.value, c.ordinality - 1 FROM jsonb_array_elements(p_calls) WITH ORDINALITY c LOOP
    ord := v_ord;
    balance := NULL; error := NULL; code := NULL;
    BEGIN
      SELECT s.balance INTO balance
        FROM tollgate_settle_request(
          v_call->'record', v_call->>'account_id', v_call->>'request_id', v_call->>'reservation_id',
          (v_call->>'amount')::bigint, v_call->>'ledger_id', v_call->>'description', v_call->>'key_id',
          (v_call->>'created_at')::bigint) s;
    EXCEPTION WHEN OTHERS THEN
      error := SQLERRM;
      code := SQLSTATE;
    END;
    RETURN NEXT;
  END LOOP;
END
$function$;
