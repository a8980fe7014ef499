-- A metering batch whose reserves carry their requests' rate-limit hits, in ONE statement, so that a
-- model call's hit costs no round trip of its own. The hits are counted first by `tollgate_count_hits`
-- (the client sorts them by subject; each names its reserve's position in `reserve`), so window rows
-- are locked before account rows, as in every statement that takes both. A reserve whose hit was
-- refused is answered `rate_limited` and holds nothing; the rest run as the batch would have run
-- without hits: with settles, `tollgate_meter_batch`; one reserve alone, the per-call
-- `tollgate_reserve_credits` (cheaper alone); more, `tollgate_reserve_batch`. Rows and positions are
-- those of the batch without hits. A hit stays counted when its reserve is refused for credit. Should
-- the statement fail, it wrote nothing: the client counts each hit on its own and sends the rest
-- again without them.
CREATE OR REPLACE FUNCTION tollgate_meter_batch_with_hits(p_hits jsonb, p_settles jsonb, p_reserves jsonb)
 RETURNS TABLE(kind text, ord integer, refusal text, balance bigint, available bigint, error text, code text)
 LANGUAGE plpgsql
AS $function$
DECLARE
  v_refused integer[];
  v_kept jsonb;
  v_map integer[];
BEGIN
  SELECT coalesce(array_agg((p_hits->h.ord->>'reserve')::integer), '{}') INTO v_refused
    FROM tollgate_count_hits(p_hits) h WHERE NOT h.counted;
  IF cardinality(v_refused) = 0 THEN
    -- Every hit counted (the usual case): the reserves as they came, not rebuilt.
    v_kept := p_reserves;
    SELECT coalesce(array_agg(i), '{}') INTO v_map FROM generate_series(0, jsonb_array_length(p_reserves) - 1) i;
  ELSE
    SELECT coalesce(jsonb_agg(x.value ORDER BY x.ordinality), '[]'::jsonb),
           coalesce(array_agg((x.ordinality - 1)::integer ORDER BY x.ordinality), '{}')
      INTO v_kept, v_map
      FROM jsonb_array_elements(p_reserves) WITH ORDINALITY x
      WHERE (x.ordinality - 1)::integer <> ALL (v_refused);
  END IF;
  RETURN QUERY SELECT 'reserve'::text, r.i, 'rate_limited'::text, NULL::bigint, NULL::bigint, NULL::text, NULL::text
    FROM unnest(v_refused) AS r(i);
  IF jsonb_array_length(p_settles) > 0 THEN
    RETURN QUERY SELECT m.kind, CASE WHEN m.kind = 'reserve' THEN v_map[m.ord + 1] ELSE m.ord END,
        m.refusal, m.balance, m.available, m.error, m.code
      FROM tollgate_meter_batch(p_settles, v_kept) m;
  ELSIF jsonb_array_length(v_kept) = 1 THEN
    RETURN QUERY SELECT 'reserve'::text, v_map[r.ord + 1], r.refusal, r.balance, r.available, r.error, r.code
      FROM tollgate_reserve_credits(v_kept) r;
  ELSIF jsonb_array_length(v_kept) > 1 THEN
    RETURN QUERY SELECT 'reserve'::text, v_map[r.ord + 1], r.refusal, r.balance, r.available, r.error, r.code
      FROM tollgate_reserve_batch(v_kept) r;
  END IF;
END
$function$;
