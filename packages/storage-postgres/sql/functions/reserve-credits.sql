-- A batch of reserves (`p_calls`: a jsonb array of `tollgate_reserve_credit`'s parameters without
-- their `p_`), each run through `tollgate_reserve_credit` in the array's order, all in the one
-- transaction of the statement. Each call runs in its own BEGIN … EXCEPTION block, a subtransaction:
-- a call that fails (a missing account, an unsafe integer) is rolled back alone and answers its
-- error, with its SQLSTATE in `code`, while the others commit. Rows carry the call's 0-based position
-- in `ord`.
--
-- The client sends a reserve alone here, and a batch whose set-based statement failed (which then
-- wrote nothing), so that each call gets its own error. It caps a batch at 64 calls: each
-- subtransaction takes an xid, and past 64 the transaction's subxid cache overflows, which slows every
-- other backend's snapshots.
CREATE OR REPLACE FUNCTION tollgate_reserve_credits(p_calls jsonb)
 RETURNS TABLE(ord integer, refusal text, balance bigint, available bigint, error text, code text)
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_call jsonb;
  v_ord bigint;
BEGIN
  FOR v_call, v_ord IN SELECT c.value, c.ordinality - 1 FROM jsonb_array_elements(p_calls) WITH ORDINALITY c LOOP
    ord := v_ord;
    refusal := NULL; balance := NULL; available := NULL; error := NULL; code := NULL;
    BEGIN
      SELECT r.refusal, r.balance, r.available INTO refusal, balance, available
        FROM tollgate_reserve_credit(
          v_call->>'account_id', v_call->>'key_id', (v_call->>'amount')::bigint,
          (v_call->>'now')::bigint, (v_call->>'month_start')::bigint,
          v_call->>'hold_id', v_call->>'request_id', (v_call->>'expires_at')::bigint,
          CASE WHEN jsonb_typeof(v_call->'record') = 'object' THEN v_call->'record' END) r;
    EXCEPTION WHEN OTHERS THEN
      error := SQLERRM;
      code := SQLSTATE;
    END;
    RETURN NEXT;
  END LOOP;
END
$function$;
