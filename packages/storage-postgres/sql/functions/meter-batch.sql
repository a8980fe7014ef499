-- The settles and the reserves of one turn of the client's event loop in ONE statement, so they pay
-- one COMMIT (one WAL flush) together and never wait for each other's account locks: every account
-- of the batch is locked first, in account order (the order every batch takes them in, so two
-- batches never deadlock), then the settles run (freeing their holds, charging), then the reserves
-- (seeing them). Rows say which list (`kind`) and which position in it (`ord`).
CREATE OR REPLACE FUNCTION tollgate_meter_batch(p_settles jsonb, p_reserves jsonb)
 RETURNS TABLE(kind text, ord integer, refusal text, balance bigint, available bigint, error text, code text)
 LANGUAGE plpgsql
AS $function$
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
$function$;
